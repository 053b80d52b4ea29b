import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelSim, type ModelSim, type ModelSimOptions } from '../src/index.js';

/**
 * Each request rule of the Messages API the simulator enforces (docs/model-sim.md, "Request
 * rules"), with the API's status, error type and message as the API prints them.
 */

let sim: ModelSim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function clientFor(options: ModelSimOptions = {}): Promise<Anthropic> {
  sim = await startModelSim(options);
  return new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 });
}

const TOOL_USE = {
  role: 'assistant' as const,
  content: [
    { type: 'text' as const, text: 'Looking.' },
    { type: 'tool_use' as const, id: 'toolu_a', name: 'bash', input: { command: 'ls' } },
  ],
};
const RESULT = { type: 'tool_result' as const, tool_use_id: 'toolu_a', content: 'file.txt' };
const TOOLS = [{ type: 'bash_20250124' as const, name: 'bash' as const }];

async function refusal(client: Anthropic, body: Record<string, unknown>): Promise<APIError> {
  const error = await client.beta.messages
    .create({ model: 'sim', max_tokens: 100, tools: TOOLS, ...body } as never)
    .then(() => undefined)
    .catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

function apiMessage(error: APIError): string {
  return (error.error as { error: { message: string } }).error.message;
}

describe('the simulator refuses what the Messages API refuses', () => {
  it('a note before the tool_result blocks: 400 "Did not find 1 tool_result block(s) at the beginning"', async () => {
    const client = await clientFor();
    const error = await refusal(client, {
      messages: [
        { role: 'user', content: 'go' },
        TOOL_USE,
        { role: 'user', content: [{ type: 'text', text: 'Hook refused.' }, RESULT] },
      ],
    });
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(apiMessage(error)).toBe(
      'messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks.',
    );
    // Text after the results is fine.
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'go' },
        TOOL_USE,
        { role: 'user', content: [RESULT, { type: 'text', text: 'Hook refused.' }] },
      ],
    });
    expect(message.type).toBe('message');
  });

  it('a tool_use with no result at all: 400 "tool_use ids were found without tool_result blocks"', async () => {
    const client = await clientFor();
    const error = await refusal(client, {
      messages: [{ role: 'user', content: 'go' }, TOOL_USE, { role: 'user', content: 'what now?' }],
    });
    expect(apiMessage(error)).toBe(
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  });

  it('a tool_result whose tool_use is not in the previous message: 400 unexpected `tool_use_id`', async () => {
    const client = await clientFor();
    const error = await refusal(client, {
      messages: [
        { role: 'user', content: 'go' },
        TOOL_USE,
        {
          role: 'user',
          content: [RESULT, { type: 'tool_result', tool_use_id: 'toolu_b', content: 'x' }],
        },
      ],
    });
    expect(apiMessage(error)).toBe(
      'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_b. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
  });

  it('empty and whitespace-only text blocks: 400', async () => {
    const client = await clientFor();
    const empty = await refusal(client, {
      messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }],
    });
    expect(apiMessage(empty)).toBe('messages: text content blocks must be non-empty');
    const blank = await refusal(client, {
      messages: [
        { role: 'user', content: 'go' },
        TOOL_USE,
        { role: 'user', content: [RESULT, { type: 'text', text: ' \n' }] },
      ],
    });
    expect(apiMessage(blank)).toBe(
      'messages: text content blocks must contain non-whitespace text',
    );
  });

  it('an empty message: 400, except the optional final assistant message', async () => {
    const client = await clientFor();
    const error = await refusal(client, {
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [] },
        { role: 'user', content: 'again' },
      ],
    });
    expect(apiMessage(error)).toBe(
      'messages.1: all messages must have non-empty content except for the optional final assistant message',
    );
    const emptyUser = await refusal(client, { messages: [{ role: 'user', content: [] }] });
    expect(apiMessage(emptyUser)).toMatch(/^messages\.0: all messages must have non-empty content/);
    const prefill = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [] },
      ],
    });
    expect(prefill.type).toBe('message');
  });

  it('more than 4 cache_control breakpoints: 400', async () => {
    const client = await clientFor();
    const marked = (text: string) => ({
      type: 'text' as const,
      text,
      cache_control: { type: 'ephemeral' as const },
    });
    const error = await refusal(client, {
      system: [marked('a'), marked('b'), marked('c')],
      messages: [{ role: 'user', content: [marked('d'), marked('e')] }],
    });
    expect(apiMessage(error)).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('context_management needs the beta context-management-2025-06-27 exactly', async () => {
    const client = await clientFor();
    const context_management = { edits: [{ type: 'clear_tool_uses_20250919' }] };
    const without = await refusal(client, {
      messages: [{ role: 'user', content: 'go' }],
      context_management,
    });
    expect(without.status).toBe(400);
    expect(apiMessage(without)).toMatch(/context-management-2025-06-27/);
    const wrong = await refusal(client, {
      messages: [{ role: 'user', content: 'go' }],
      context_management,
      betas: ['context-management-2099-01-01'],
    });
    expect(wrong.status).toBe(400);
  });

  it('a prompt over the model context window: 400 "prompt is too long: N tokens > M maximum"', async () => {
    const client = await clientFor({ contextWindow: { 'small-model': 500 } });
    const long = 'word '.repeat(1000);
    const error = await refusal(client, {
      model: 'small-model',
      messages: [{ role: 'user', content: long }],
    });
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(apiMessage(error)).toMatch(/^prompt is too long: \d+ tokens > 500 maximum$/);
    // Another model keeps the default window.
    const other = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages: [{ role: 'user', content: long }],
    });
    expect(other.type).toBe('message');
  });

  it('the Models API reports each model context window as max_input_tokens; an unknown model is 404', async () => {
    const client = await clientFor({
      contextWindow: { 'small-model': 500 },
      faults: { unknownModels: ['claude-nope-9'] },
    });
    const small = await client.models.retrieve('small-model');
    expect(small).toMatchObject({ type: 'model', id: 'small-model', max_input_tokens: 500 });
    expect((await client.models.retrieve('sim')).max_input_tokens).toBe(200_000);
    const error = await client.models
      .retrieve('claude-nope-9')
      .then(() => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(404);
    expect((error as APIError).type).toBe('not_found_error');
    // Looking a model up is not a Messages request.
    expect(sim?.requests).toBe(0);
  });

  it('a reply that would pass the context window stops with model_context_window_exceeded', async () => {
    const client = await clientFor({
      contextWindow: 300,
      script: () => ({ content: [{ type: 'text', text: 'x'.repeat(2000) }] }),
    });
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 4000,
      messages: [{ role: 'user', content: 'a short prompt' }],
    });
    expect(message.stop_reason).toBe('model_context_window_exceeded');
    expect(message.usage.input_tokens + message.usage.output_tokens).toBeLessThanOrEqual(300);
  });

  it('a body over the size limit: 413 request_too_large', async () => {
    const client = await clientFor({ maxRequestBytes: 10_000 });
    const error = await refusal(client, {
      messages: [{ role: 'user', content: 'x'.repeat(20_000) }],
    });
    expect(error.status).toBe(413);
    expect(error.type).toBe('request_too_large');
  });
});
