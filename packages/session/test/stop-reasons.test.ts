import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScript, SimScriptRequest } from '@baton/model-sim';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, firstAnswerOnly, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

function textOf(message: BetaMessageParam | undefined): string {
  if (message === undefined) return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? [])
    .map((block) =>
      block.type === 'text'
        ? block.text
        : block.type === 'tool_result'
          ? JSON.stringify(block.content)
          : '',
    )
    .join('\n');
}

/** A project whose memory is already initialised; `seen` records every request. */
async function initialised(script?: SimScript) {
  const seen: SimScriptRequest[] = [];
  const h = await createHarness(
    {
      script: (request) => {
        seen.push(request);
        return script?.(request);
      },
    },
    { initialised: true },
  );
  return { h, seen };
}

describe('every stop reason is handled', () => {
  it('max_tokens in the middle of a tool call: the call is never run, the turn is retried with twice the room', async () => {
    const { h, seen } = await initialised();
    harness = h;
    const cut = h.sim.requests + 2;
    h.sim.setFaults({ maxTokensOn: [cut] });
    const result = await runSession(h.options({ sessionNumber: 2, maxTokens: 4096 }));
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    expect(
      h.events.some((event) => event.type === 'turn' && event.stopReason === 'max_tokens'),
    ).toBe(true);
    const index = seen.findIndex((request) => request.number === cut);
    expect(seen[index]!.params.max_tokens).toBe(4096);
    // The retry is the same request with more room: the cut reply was not kept, nothing ran.
    expect(seen[index + 1]!.params.max_tokens).toBe(8192);
    expect(seen[index + 1]!.params.messages).toEqual(seen[index]!.params.messages);
    const cutIds = h.sim.received.find((record) => record.number === cut)?.toolCalls ?? [];
    expect(cutIds.length).toBeGreaterThan(0);
  });

  it('max_tokens again and again: the session ends with a clear reason', async () => {
    const { h, seen } = await initialised();
    harness = h;
    const next = h.sim.requests;
    h.sim.setFaults({ maxTokensOn: Array.from({ length: 20 }, (_, index) => next + 1 + index) });
    const result = await runSession(h.options({ sessionNumber: 2, maxConsecutiveMaxTokens: 3 }));
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'max_tokens' });
    expect(result.reason).toContain('max_tokens 3 times in a row');
    // The room was doubled up to the ceiling, then the model was told to split the call.
    const rooms = seen.map((request) => request.params.max_tokens);
    expect(rooms).toEqual(expect.arrayContaining([4096, 8192, 16384, 32000]));
    expect(
      seen.some((request) =>
        JSON.stringify(request.messages).includes('split it into smaller steps'),
      ),
    ).toBe(true);
  });

  it('pause_turn: the conversation is sent back unchanged to continue', async () => {
    let paused = false;
    const { h, seen } = await initialised(() => {
      if (!paused) {
        paused = true;
        return {
          content: [{ type: 'text', text: 'Working on a long step...' }],
          stopReason: 'pause_turn',
        };
      }
      return undefined;
    });
    harness = h;
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    const afterPause = seen[1]!.params.messages;
    expect(afterPause[afterPause.length - 1]).toMatchObject({ role: 'assistant' });
    expect(textOf(afterPause[afterPause.length - 1])).toBe('Working on a long step...');
  });

  it('refusal: outcome refused, no end-of-session turn', async () => {
    const { h } = await initialised();
    harness = h;
    const before = h.sim.requests;
    h.sim.setFaults({ refusalOn: [before + 2] });
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(result).toMatchObject({ outcome: 'refused', stopReason: 'refusal', turns: 2 });
    expect(h.sim.requests).toBe(before + 2);
  });

  it('model_context_window_exceeded: a full context, not a failure; the log is closed from a fresh context and says at which turn', async () => {
    let count = 0;
    const { h, seen } = await initialised(() => {
      count += 1;
      return count === 2
        ? {
            content: [{ type: 'text', text: 'out of room' }],
            stopReason: 'model_context_window_exceeded',
          }
        : undefined;
    });
    harness = h;
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(result).toMatchObject({
      outcome: 'budget_exhausted',
      stopReason: 'context_full',
      contextFull: { turn: 2, useful: false },
    });
    expect(result.reason).toContain('filled at turn 2');
    const endRequest = seen[2]!.params.messages;
    expect(endRequest).toHaveLength(1);
    expect(textOf(endRequest[0])).toContain('<baton_session kind="end" project="todo" session="2"');
    expect(textOf(endRequest[0])).toContain('<baton_end_of_session reason="context_full">');
    const log = await h.store.read('progress.md');
    expect(log).toContain('Session 2 end');
    expect(log).toContain('the context window of session 2 filled at turn 2');
  });

  it('parallel tool calls in one turn run safely and answer in order', async () => {
    const { h, seen } = await initialised(
      firstAnswerOnly({
        content: [
          {
            type: 'tool_use',
            id: 'toolu_a',
            name: 'bash',
            input: { command: 'sleep 0.2; cat notes.txt' },
          },
          {
            type: 'tool_use',
            id: 'toolu_b',
            name: 'memory',
            input: { command: 'view', path: '/memories/features.json' },
          },
          {
            type: 'tool_use',
            id: 'toolu_c',
            name: 'str_replace_based_edit_tool',
            input: { command: 'create', path: 'notes.txt', file_text: 'hello' },
          },
          { type: 'tool_use', id: 'toolu_d', name: 'bash', input: { command: 'cat notes.txt' } },
          { type: 'tool_use', id: 'toolu_e', name: 'nope', input: {} },
        ],
      }),
    );
    harness = h;
    await runSession(h.options({ sessionNumber: 2 }));
    const messages = seen[1]!.params.messages;
    const results = messages[messages.length - 1]!.content as Array<{
      tool_use_id: string;
      content: string;
      is_error?: boolean;
    }>;
    expect(results.map((block) => block.tool_use_id)).toEqual([
      'toolu_a',
      'toolu_b',
      'toolu_c',
      'toolu_d',
      'toolu_e',
    ]);
    // Workspace calls keep their order: the first cat ran before the file existed.
    expect(results[0]!.content).toContain('No such file');
    expect(results[2]!.content).toBe('File created successfully at: notes.txt');
    expect(results[3]!.content).toBe('hello');
    expect(results[1]!.content).toContain("Here's the content of /memories/features.json");
    expect(results[4]).toMatchObject({ is_error: true });
  });

  it('a guard refusal reaches the agent as a readable tool error', async () => {
    const { h, seen } = await initialised(
      firstAnswerOnly({
        content: [
          {
            type: 'tool_use',
            id: 'toolu_del',
            name: 'memory',
            input: { command: 'delete', path: '/memories/features.json' },
          },
          {
            type: 'tool_use',
            id: 'toolu_rm',
            name: 'memory',
            input: { command: 'create', path: '/memories/features.json', file_text: '[]' },
          },
        ],
      }),
    );
    harness = h;
    const result = await runSession(h.options({ sessionNumber: 2 }));
    const messages = seen[1]!.params.messages;
    const results = messages[messages.length - 1]!.content as Array<{
      content: string;
      is_error?: boolean;
    }>;
    expect(results.every((block) => block.is_error === true)).toBe(true);
    expect(results[0]!.content).toContain('cannot be deleted');
    expect(results[1]!.content).toContain('remove feature F1, F2, F3');
    expect(results[1]!.content).toContain('only the "passes" field of a feature may change');
    expect(result.featuresAfter.total).toBe(3);
  });

  it('an onEvent that throws does not stop the session', async () => {
    const { h } = await initialised();
    harness = h;
    const result = await runSession(
      h.options({
        sessionNumber: 2,
        onEvent: () => {
          throw new Error('sink down');
        },
      }),
    );
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
  });
});
