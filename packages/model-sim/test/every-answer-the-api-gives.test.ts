import Anthropic, {
  APIError,
  AuthenticationError,
  NotFoundError,
  PermissionDeniedError,
} from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelSim } from '../src/index.js';
import type { ModelSim, SimFaults, SimScript } from '../src/index.js';

/** Each answer of item 2 of #25, produced on demand and read through the real SDK. */

const sims: ModelSim[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((sim) => sim.close()));
});

async function setup(faults: SimFaults, script?: SimScript) {
  const sim = await startModelSim({ faults, script });
  sims.push(sim);
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 }) };
}

const params = {
  model: 'sim',
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: 'write the file' }],
};

/** A model that writes a file: a sentence, then a tool call with a long input. */
const writesAFile: SimScript = () => ({
  content: [
    { type: 'text', text: 'Writing the file.' },
    {
      type: 'tool_use',
      name: 'str_replace_based_edit_tool',
      input: { command: 'create', path: 'notes.md', file_text: 'line of notes\n'.repeat(20) },
    },
  ],
});

describe('the simulator gives every answer the API gives, on demand', () => {
  it('max_tokens in the middle of a tool_use block: the block is there, its input cut (non-streaming and streaming)', async () => {
    const { client } = await setup({ maxTokensOn: [1, 2] }, writesAFile);
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Writing the file.' });
    const tool = message.content[1];
    expect(tool?.type).toBe('tool_use');
    const input = (tool as { input: { command?: string; file_text?: string } }).input;
    expect(input.command).toBe('create');
    expect(input.file_text ?? '').not.toBe('line of notes\n'.repeat(20));

    const streamed = await client.beta.messages.stream(params).finalMessage();
    expect(streamed.stop_reason).toBe('max_tokens');
    const streamedInput = (streamed.content[1] as { input: { file_text?: string } }).input;
    expect(streamedInput.file_text ?? '').not.toBe('line of notes\n'.repeat(20));
  });

  it('an empty reply: content [], end_turn, 2 output tokens', async () => {
    const { client } = await setup({ emptyReplyOn: [1] });
    const message = await client.beta.messages.create(params);
    expect(message.content).toEqual([]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBe(2);
  });

  it('401 authentication_error, 403 permission_error, never retried by the SDK', async () => {
    const { sim } = await setup({ unauthorizedOn: [1], forbiddenOn: [2] });
    const client = new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 2 });
    const unauthorized = await client.beta.messages.create(params).catch((error: unknown) => error);
    expect(unauthorized).toBeInstanceOf(AuthenticationError);
    expect((unauthorized as APIError).type).toBe('authentication_error');
    const forbidden = await client.beta.messages.create(params).catch((error: unknown) => error);
    expect(forbidden).toBeInstanceOf(PermissionDeniedError);
    expect((forbidden as APIError).type).toBe('permission_error');
    expect(sim.requests).toBe(2);
  });

  it('404 not_found_error "model: <id>" for a model the API does not know', async () => {
    const { client } = await setup({ unknownModels: ['claude-nonexistent'] });
    const error = await client.beta.messages
      .create({ ...params, model: 'claude-nonexistent' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as APIError).error).toMatchObject({
      error: { type: 'not_found_error', message: 'model: claude-nonexistent' },
    });
  });

  it('an error event of the type asked for after the 200 and the first content', async () => {
    const { client } = await setup({ streamErrorOn: [1], streamErrorType: 'api_error' });
    const texts: string[] = [];
    const stream = client.beta.messages.stream(params);
    stream.on('text', (text) => texts.push(text));
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBeUndefined();
    expect((error as { type?: string }).type).toBe('api_error');
    expect(texts.join('').length).toBeGreaterThan(0);
  });
});
