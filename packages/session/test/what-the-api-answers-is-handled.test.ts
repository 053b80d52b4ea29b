import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { SimScriptRequest } from '@baton/model-sim';
import { runSession } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

/**
 * Each answer the API can give a session, against the strict simulator: what the session does
 * (docs/sessions.md, "What the API can answer and what Baton does").
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

function text(request: SimScriptRequest): string {
  return JSON.stringify(request.params.messages);
}

describe('what the API answers is handled', () => {
  it('an empty reply after tool results is answered once with a short nudge and the work goes on', async () => {
    const seen: SimScriptRequest[] = [];
    const h = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    harness = h;
    h.sim.setFaults({ emptyReplyOn: [h.sim.requests + 2] });
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    const nudged = seen.filter((request) => text(request).includes('Your reply was empty'));
    expect(nudged.length).toBeGreaterThan(0);
    expect(h.events.filter((event) => event.type === 'empty-reply')).toEqual([
      expect.objectContaining({ nudged: true }),
    ]);
    // The empty reply was never sent back, and the nudge follows the tool results.
    const after = nudged[0]!.params.messages;
    const last = after[after.length - 1]!;
    expect(last.role).toBe('user');
    const blocks = last.content as Array<{ type: string }>;
    expect(blocks[0]!.type).toBe('tool_result');
    expect(blocks[blocks.length - 1]).toMatchObject({ type: 'text' });
    expect(after.some((message) => (message.content ?? []).length === 0)).toBe(false);
  });

  it('a prompt over the context window (400 prompt is too long) is a full context: log closed from a fresh context, not a failure', async () => {
    // Measure the session's requests once, then give a window that the request before the
    // last working turn no longer fits, while every earlier prompt and reply does.
    const probe = await createHarness({}, { initialised: true });
    const probeResult = await runSession(probe.options({ sessionNumber: 2 }));
    expect(probeResult.outcome).toBe('completed');
    const records = probe.sim.received;
    await probe.close();
    const target = records.findIndex((record) => record.stopReason === 'end_turn') - 1;
    const window = records[target]!.inputTokensAfter! - 1;
    const before = records[target - 1]!;
    expect(before.inputTokensAfter! + before.outputTokens!).toBeLessThan(window);
    const h = await createHarness({ contextWindow: window }, { initialised: true });
    harness = h;
    // The session is told a larger window than the API enforces, so its own count does not
    // stop it first: the API's 400 is what it meets.
    const result = await runSession(h.options({ sessionNumber: 2, contextWindow: 10 * window }));
    expect(result).toMatchObject({ outcome: 'budget_exhausted', stopReason: 'context_full' });
    expect(result.contextFull?.turn).toBeGreaterThan(1);
    expect(h.sim.received.some((record) => record.status === 400)).toBe(true);
    expect(h.events.find((event) => event.type === 'context-full')).toMatchObject({
      cause: 'prompt_too_long',
      turn: result.contextFull?.turn,
      contextWindow: window,
    });
    const log = await h.store.read('progress.md');
    expect(log).toContain(`filled at turn ${result.contextFull?.turn}`);
  });

  it('the context counter: the session hands off before a request whose prompt and max_tokens no longer fit the window the Models API reports, keeping room for the end-of-session turn', async () => {
    const maxTokens = 1024;
    const probe = await createHarness({}, { initialised: true });
    const probeResult = await runSession(probe.options({ sessionNumber: 2, maxTokens }));
    expect(probeResult.outcome).toBe('completed');
    const records = probe.sim.received;
    await probe.close();
    // A window the request before the last working turn still fits, but not with its max_tokens.
    const target = records.findIndex((record) => record.stopReason === 'end_turn') - 1;
    const window = records[target]!.inputTokensAfter! + maxTokens - 1;
    const seen: SimScriptRequest[] = [];
    const h = await createHarness(
      { contextWindow: { sim: window }, script: (request) => void seen.push(request) },
      { initialised: true },
    );
    harness = h;
    const result = await runSession(h.options({ sessionNumber: 2, maxTokens }));
    expect(result).toMatchObject({ outcome: 'budget_exhausted', stopReason: 'context_full' });
    // The API never had to refuse anything: the session counted and stopped first ...
    expect(h.sim.received.every((record) => record.status === 200)).toBe(true);
    const turn = result.contextFull?.turn ?? 0;
    expect(turn).toBeGreaterThan(1);
    expect(turn).toBeLessThanOrEqual(target + 1);
    const full = h.events.find((event) => event.type === 'context-full');
    expect(full).toMatchObject({ cause: 'counter', turn, contextWindow: window });
    const counted = full?.type === 'context-full' ? full.promptTokens : null;
    expect(counted).toBeLessThanOrEqual(records[target]!.inputTokensAfter! + 20);
    // ... early enough that every request, the end-of-session turn's included, fit with its
    // max_tokens, and the agent closed its log in the same conversation (not from a fresh one).
    for (const record of h.sim.received) {
      expect(record.inputTokensAfter! + record.maxTokens!).toBeLessThanOrEqual(window);
    }
    const closing = seen.filter((request) => text(request).includes('<baton_end_of_session'));
    expect(closing.length).toBeGreaterThan(0);
    expect(JSON.stringify(closing[0]!.params.messages[0])).toContain('kind=\\"resume\\"');
    expect(closing[0]!.params.messages.length).toBeGreaterThan(2 * (turn - 1));
    const log = await h.store.read('progress.md');
    expect(log).toContain('## Session 2 end (context_full)');
    expect(log).toContain(`filled at turn ${turn}`);
  });

  it('401 and 403: the session stops at once with stopReason auth, no retries, no end-of-session turn', async () => {
    for (const faults of [{ unauthorizedOn: [1] }, { forbiddenOn: [1] }]) {
      const h = await createHarness({ faults }, { initialised: true });
      harness = h;
      const result = await runSession(h.options({ sessionNumber: 2 }));
      expect(result).toMatchObject({ outcome: 'failed', stopReason: 'auth', turns: 0 });
      expect(result.reason).toMatch(
        /^The API refused the API key: 40[13] (authentication|permission)_error: [^{]*\. Check ANTHROPIC_API_KEY/u,
      );
      expect(h.sim.requests).toBe(1);
      expect(h.events.some((event) => event.type === 'api-retry')).toBe(false);
      await h.close();
      harness = undefined;
    }
  });

  it('404 for the model: fails with one line naming the model', async () => {
    const h = await createHarness(
      { faults: { unknownModels: ['claude-nope-9'] } },
      { initialised: true },
    );
    harness = h;
    const result = await runSession(h.options({ sessionNumber: 2, model: 'claude-nope-9' }));
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'model_not_found' });
    expect(result.reason).toContain('"claude-nope-9"');
    expect(result.reason).not.toContain('\n');
    expect(h.sim.requests).toBe(1);
  });
});
