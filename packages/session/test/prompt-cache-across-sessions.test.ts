import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { defineContextConfig } from '@baton/context-config';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { runSession, type SessionEvent } from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type TurnEvent = Extract<SessionEvent, { type: 'turn' }>;
const turnsOf = (events: SessionEvent[], sessionId: string): TurnEvent[] =>
  events.filter(
    (event): event is TurnEvent => event.type === 'turn' && event.sessionId === sessionId,
  );

describe('prompt caching across the sessions of a project', () => {
  it('tools and system never change; project, session number and interruption are in the first user message', async () => {
    const seen: SimScriptRequest[] = [];
    harness = await createHarness({
      script: (request) => {
        seen.push(request);
        return undefined;
      },
    });
    const h = harness;
    const init = await runSession(h.options({ kind: 'init', sessionNumber: 1 }));
    expect(init.outcome).toBe('completed');
    const initRequests = seen.length;
    const resume = await runSession(
      h.options({
        kind: 'resume',
        sessionNumber: 2,
        interrupted: true,
        project: { id: 'another-project', goal: 'Something else entirely.' },
      }),
    );
    expect(resume.turns).toBeGreaterThan(0);
    expect(seen.length).toBeGreaterThan(initRequests);

    const prefixes = new Set(
      seen.map((request) =>
        JSON.stringify({ system: request.params.system, tools: request.params.tools }),
      ),
    );
    expect(prefixes.size).toBe(1);
    const first = JSON.stringify(seen[initRequests]!.params.messages[0]);
    expect(first).toContain('project=\\"another-project\\" session=\\"2\\" interrupted=\\"true\\"');
    expect(first).toContain('Something else entirely.');
    expect(JSON.stringify(seen[0]!.params.system)).not.toContain('todo');
  });

  it('reads the cache from the second request on, and the second session reads the prefix the first wrote', async () => {
    harness = await createHarness();
    const h = harness;
    // The simulator at Sonnet's prices (`sim` costs nothing), so the costs can be compared.
    const model = 'sim-sonnet';
    const init = await runSession(h.options({ kind: 'init', sessionNumber: 1, model }));
    const resume = await runSession(h.options({ kind: 'resume', sessionNumber: 2, model }));
    expect(init.outcome).toBe('completed');
    expect(resume.outcome).toBe('completed');

    const records = h.sim.received.filter((record) => record.path === '/v1/messages');
    expect(records.length).toBe(init.turns + resume.turns);
    // Every request sends its breakpoints: stable prefix, conversation end, previous end.
    expect(records[0]!.cache).toMatchObject({ breakpoints: 2, readInputTokens: 0 });
    expect(records[0]!.cache!.write5mInputTokens).toBeGreaterThan(500);
    for (const record of records.slice(1)) {
      expect(record.cache!.breakpoints).toBeLessThanOrEqual(4);
      expect(record.cache!.readInputTokens, `request ${record.number}`).toBeGreaterThan(0);
    }
    // The first request of session 2 reads tools + system, written by session 1's first request.
    const secondSessionFirst = records[init.turns]!;
    expect(secondSessionFirst.cache!.readInputTokens).toBeGreaterThan(500);
    expect(secondSessionFirst.cache!.readInputTokens).toBeLessThan(
      records[0]!.cache!.write5mInputTokens,
    );

    // The same numbers reach the turn events and the session summary.
    const firstSession = turnsOf(h.events, init.sessionId);
    expect(firstSession[0]!.usage.cacheReadInputTokens).toBe(0);
    expect(firstSession[1]!.usage.cacheReadInputTokens).toBeGreaterThan(0);
    expect(turnsOf(h.events, resume.sessionId)[0]!.usage.cacheReadInputTokens).toBe(
      secondSessionFirst.cache!.readInputTokens,
    );
    expect(resume.usage.cacheReadInputTokens).toBeGreaterThan(resume.usage.inputTokens);
    expect(resume.usage.costUsd).toBeLessThan(resume.usage.uncachedCostUsd);
  });

  it('a cleared turn shows its cache invalidation, and the clear sticks: later turns read the cleared prompt', async () => {
    let turn = 0;
    harness = await createHarness(
      {
        script: (request) => {
          const text = JSON.stringify(request.params.messages.at(-1)?.content ?? '');
          if (text.includes('<baton_end_of_session'))
            return { content: [{ type: 'text', text: 'Noted.' }] };
          turn += 1;
          if (turn > 12) return { content: [{ type: 'text', text: 'Done.' }] };
          return {
            content: [
              { type: 'text', text: `Run ${turn}.` },
              { type: 'tool_use', name: 'bash', input: { command: 'cat big.txt' } },
            ],
          };
        },
      },
      { git: false },
    );
    const h = harness;
    await writeFile(path.join(h.workspace, 'big.txt'), 'line of test output\n'.repeat(300));
    const result = await runSession(
      h.options({
        model: 'sim-sonnet',
        context: defineContextConfig({
          clearToolUses: {
            trigger: { type: 'input_tokens', value: 8_000 },
            keep: { type: 'tool_uses', value: 1 },
            clear_at_least: { type: 'input_tokens', value: 3_000 },
          },
        }),
      }),
    );
    expect(result.outcome).toBe('completed');
    const turns = turnsOf(h.events, result.sessionId);
    const clearedAt = turns.findIndex((event) => event.appliedEdits.length > 0);
    expect(clearedAt).toBeGreaterThan(0);
    const cleared = turns[clearedAt]!;
    expect(cleared.cacheInvalidation).not.toBeNull();
    expect(cleared.cacheInvalidation!.rewrittenInputTokens).toBeGreaterThan(0);
    expect(cleared.cacheInvalidation!.costUsd).toBeGreaterThan(0);
    // The clear rewrote the cache from the first cleared result on: it read less than the turn before.
    expect(cleared.usage.cacheReadInputTokens).toBeLessThan(
      turns[clearedAt - 1]!.usage.cacheReadInputTokens,
    );
    // The next turn sends the cleared history itself: no new clear, and it reads what the clear wrote.
    const next = turns[clearedAt + 1]!;
    expect(next.appliedEdits).toEqual([]);
    expect(next.usage.cacheReadInputTokens).toBeGreaterThanOrEqual(
      cleared.usage.cacheReadInputTokens + cleared.usage.cacheCreationInputTokens,
    );
    expect(result.usage.cacheInvalidatedInputTokens).toBeGreaterThan(0);
  });
});
