import type { BetaToolUseBlock } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, it } from 'vitest';
import type { SessionTool } from '../tools/types.js';
import { createToolbox, toolTimeLimitMessage } from './toolbox.js';

function use(id: string, name: string): BetaToolUseBlock {
  return { type: 'tool_use', id, name, input: {} } as unknown as BetaToolUseBlock;
}

describe('a tool call that hangs', () => {
  it('is stopped at its time limit, the model is told, and the next call in its lane runs', async () => {
    let aborted: unknown;
    const hanging: SessionTool = {
      name: 'hang',
      definition: { name: 'hang', input_schema: { type: 'object' } },
      lane: 'workspace',
      timeLimitMs: 200,
      execute: (_input, signal) =>
        new Promise(() => {
          signal?.addEventListener('abort', () => {
            aborted = signal.reason;
          });
        }),
      summarize: () => 'hang',
    };
    const quick: SessionTool = {
      name: 'quick',
      definition: { name: 'quick', input_schema: { type: 'object' } },
      lane: 'workspace',
      execute: () => Promise.resolve({ content: 'done', isError: false }),
      summarize: () => 'quick',
    };
    const events: unknown[] = [];
    const toolbox = createToolbox([hanging, quick], async (body) => {
      events.push(body);
    });
    const started = Date.now();
    const results = await toolbox.run(
      [use('a', 'hang'), use('b', 'quick')],
      1,
      new AbortController().signal,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: toolTimeLimitMessage(200), is_error: true },
      { type: 'tool_result', tool_use_id: 'b', content: 'done' },
    ]);
    expect(toolTimeLimitMessage(200)).toContain('did not finish within 200 ms');
    expect(aborted).toBeInstanceOf(Error);
    expect(events).toHaveLength(2);
  });
});
