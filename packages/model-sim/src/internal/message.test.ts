import { describe, expect, it } from 'vitest';
import { buildMessage, streamEvents } from './message.js';

describe('stream events', () => {
  it('follow the API order with input_json_delta for tool_use and usage in message_delta', () => {
    const message = buildMessage({
      id: 'msg_1',
      model: 'sim',
      blocks: [
        { type: 'text', text: 'hello' },
        { type: 'tool_use', id: 'toolu_1', name: 'bash', input: { command: 'ls' } },
      ],
      stopReason: 'tool_use',
      inputTokens: 10,
      outputTokens: 5,
      contextManagement: { applied_edits: [] },
    });
    const events = streamEvents(message);
    expect(events.map((event) => event.type)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const json = events
      .flatMap((event) =>
        event.type === 'content_block_delta' && event.delta.type === 'input_json_delta'
          ? [event.delta.partial_json]
          : [],
      )
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'ls' });
    const delta = events.find((event) => event.type === 'message_delta');
    expect(delta).toMatchObject({
      usage: { input_tokens: 10, output_tokens: 5 },
      context_management: { applied_edits: [] },
    });
    const start = events[0];
    expect(start?.type === 'message_start' && start.message.content).toEqual([]);
  });
});
