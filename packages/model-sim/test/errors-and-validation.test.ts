import type Anthropic from '@anthropic-ai/sdk';
import { AuthenticationError, BadRequestError, NotFoundError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { ModelSim } from '../src/index.js';
import { useSimClient } from './support/sim-session-fixture.js';

let sim: ModelSim;
let client: Anthropic;
useSimClient((fixture) => ({ sim, client } = fixture));

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { 'x-api-key': 'test' },
) {
  const response = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    response,
    body: (await response.json()) as {
      type: string;
      error: { type: string; message: string };
      request_id: string;
    },
  };
}

const user = (content: string) => ({ role: 'user' as const, content });

describe('error bodies and request validation', () => {
  it('answers a bad request with the API error shape, request-id and x-should-retry false', async () => {
    const { response, body } = await post('/v1/messages', { model: 'sim', messages: [user('hi')] });
    expect(response.status).toBe(400);
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/max_tokens/);
    expect(body.request_id).toBe(response.headers.get('request-id'));
  });

  it('rejects invalid JSON', async () => {
    const { response, body } = await post('/v1/messages', '{not json');
    expect(response.status).toBe(400);
    expect(body.error.message).toMatch(/not valid JSON/);
  });

  it('requires an API key header (any value)', async () => {
    const { response, body } = await post(
      '/v1/messages',
      { model: 'sim', max_tokens: 5, messages: [user('hi')] },
      {},
    );
    expect(response.status).toBe(401);
    expect(body.error.type).toBe('authentication_error');
  });

  it('answers unknown routes with not_found_error', async () => {
    const error = await client.get('/v1/nothing').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
  });

  it.each([
    ['a missing model', { max_tokens: 5, messages: [user('hi')] }, /model/],
    ['max_tokens 0', { model: 'sim', max_tokens: 0, messages: [user('hi')] }, /max_tokens/],
    ['no messages', { model: 'sim', max_tokens: 5, messages: [] }, /at least one message/],
    [
      'an assistant first',
      { model: 'sim', max_tokens: 5, messages: [{ role: 'assistant', content: 'x' }] },
      /first message/,
    ],
    [
      'an unknown role',
      { model: 'sim', max_tokens: 5, messages: [{ role: 'robot', content: 'x' }] },
      /role/,
    ],
    [
      'a tool_use without its tool_result',
      {
        model: 'sim',
        max_tokens: 5,
        messages: [
          user('hi'),
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} }],
          },
          user('no result here'),
        ],
      },
      /toolu_1.*tool_result/,
    ],
    [
      'a tool_result for an unknown tool_use',
      {
        model: 'sim',
        max_tokens: 5,
        messages: [
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'x' }],
          },
        ],
      },
      /unexpected `tool_use_id`/,
    ],
    [
      'a custom tool without input_schema',
      { model: 'sim', max_tokens: 5, messages: [user('hi')], tools: [{ name: 'x' }] },
      /input_schema/,
    ],
    [
      'duplicate tool names',
      {
        model: 'sim',
        max_tokens: 5,
        messages: [user('hi')],
        tools: [
          { type: 'bash_20250124', name: 'bash' },
          { type: 'bash_20250124', name: 'bash' },
        ],
      },
      /unique/,
    ],
    [
      'a bad tool name',
      {
        model: 'sim',
        max_tokens: 5,
        messages: [user('hi')],
        tools: [{ name: 'a b', input_schema: { type: 'object' } }],
      },
      /name/,
    ],
  ])('rejects %s with invalid_request_error', async (_name, body, pattern) => {
    const error = await client.beta.messages
      .create(body as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).type).toBe('invalid_request_error');
    expect((error as BadRequestError).message).toMatch(pattern);
  });

  it('rejects context_management without the beta header, and accepts it with betas', async () => {
    const context_management = { edits: [{ type: 'clear_tool_uses_20250919' as const }] };
    const { response, body } = await post('/v1/messages', {
      model: 'sim',
      max_tokens: 50,
      messages: [user('hi')],
      context_management,
    });
    expect(response.status).toBe(400);
    expect(body.error.message).toMatch(/context-management-2025-06-27/);
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 50,
      messages: [user('hi')],
      context_management,
      betas: ['context-management-2025-06-27'],
    });
    expect(message.context_management).toEqual({ applied_edits: [] });
  });

  it('accepts any model id and typed tools', async () => {
    const message = await client.beta.messages.create({
      model: 'claude-anything',
      max_tokens: 50,
      messages: [user('hi')],
      tools: [
        { type: 'memory_20250818', name: 'memory' },
        { type: 'bash_20250124', name: 'bash' },
        { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
      ],
    });
    expect(message.model).toBe('claude-anything');
  });

  it('does not count control and count_tokens calls as message requests', async () => {
    await fetch(`${sim.url}/_sim/stats`);
    await client.beta.messages.countTokens({ model: 'sim', messages: [user('hi')] });
    expect(sim.requests).toBe(0);
    const auth = await post(
      '/v1/messages/count_tokens',
      { model: 'sim', messages: [user('hi')] },
      {},
    );
    expect(auth.response.status).toBe(401);
    expect(new AuthenticationError(401, auth.body, undefined, new Headers()).type).toBe(
      'authentication_error',
    );
  });
});
