import Anthropic, {
  AnthropicError,
  APIConnectionError,
  APIError,
  InternalServerError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelSim } from '../src/index.js';
import type { ModelSim, SimFaults } from '../src/index.js';

const sims: ModelSim[] = [];

afterEach(async () => {
  await Promise.all(sims.splice(0).map((sim) => sim.close()));
});

async function setup(faults: SimFaults, maxRetries = 0) {
  const sim = await startModelSim({ faults });
  sims.push(sim);
  const client = new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries });
  return { sim, client };
}

const params = {
  model: 'sim',
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'hi' }],
};

describe('fault injection', () => {
  it('answers 429 with retry-after 0 and the SDK retries it to success', async () => {
    const { sim, client } = await setup({ rateLimitOn: [1] }, 1);
    const started = Date.now();
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('end_turn');
    expect(sim.requests).toBe(2);
    expect(sim.received.map((record) => record.status)).toEqual([429, 200]);
    // retry-after: 0 is not a positive delay, so the SDK uses its own short backoff (< 1 s each).
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('honours a positive retry-after: the SDK waits that long before retrying', async () => {
    const { sim, client } = await setup({ rateLimitOn: [1], retryAfterSeconds: 0.3 }, 1);
    const started = Date.now();
    await client.beta.messages.create(params);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(sim.requests).toBe(2);
  });

  it('shapes a 429 like the API: error body, request-id, retry-after and x-should-retry headers', async () => {
    const { sim } = await setup({ rateLimitOn: [1], retryAfterSeconds: 7 });
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test' },
      body: JSON.stringify(params),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('x-should-retry')).toBe('true');
    const requestId = response.headers.get('request-id');
    expect(requestId).toMatch(/^req_sim_/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: expect.any(String) as string },
      request_id: requestId,
    });
  });

  it('surfaces a 429 as RateLimitError with the request id when retries are off', async () => {
    const { client } = await setup({ rateLimitOn: [1] });
    const error = await client.beta.messages.create(params).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).requestID).toMatch(/^req_sim_/);
    expect((error as RateLimitError).type).toBe('rate_limit_error');
  });

  it('answers 529 overloaded_error, retried by the SDK', async () => {
    const { sim, client } = await setup({ overloadedOn: [1], retryAfterSeconds: 0.01 }, 1);
    await client.beta.messages.create(params);
    expect(sim.received.map((record) => record.status)).toEqual([529, 200]);
    const { client: noRetry } = await setup({ overloadedOn: [1] });
    const error = await noRetry.beta.messages.create(params).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(529);
    expect((error as APIError).type).toBe('overloaded_error');
  });

  it('overloadedModels answers 529 overloaded_error like the API for the named model only, however often retried', async () => {
    const { sim, client } = await setup(
      { overloadedModels: ['claude-opus-4-1'], retryAfterSeconds: 0 },
      2,
    );
    const error = await client.beta.messages
      .create({ ...params, model: 'claude-opus-4-1' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(529);
    expect((error as APIError).type).toBe('overloaded_error');
    expect((error as APIError).requestID).toMatch(/^req_sim_/);
    expect(sim.received.map((record) => [record.status, record.fault, record.model])).toEqual([
      [529, 'overloaded-model', 'claude-opus-4-1'],
      [529, 'overloaded-model', 'claude-opus-4-1'],
      [529, 'overloaded-model', 'claude-opus-4-1'],
    ]);
    // Another model on the same simulator answers normally.
    const message = await client.beta.messages.create({ ...params, model: 'claude-haiku-4-5' });
    expect(message.model).toBe('claude-haiku-4-5');
    const response = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'test' },
      body: JSON.stringify({ ...params, model: 'claude-opus-4-1' }),
    });
    expect(response.status).toBe(529);
    expect(response.headers.get('x-should-retry')).toBe('true');
    const requestId = response.headers.get('request-id');
    expect(requestId).toMatch(/^req_sim_/);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: expect.any(String) as string },
      request_id: requestId,
    });
  });

  it('answers 500 api_error', async () => {
    const { client } = await setup({ serverErrorOn: [1] });
    const error = await client.beta.messages.create(params).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InternalServerError);
    expect((error as InternalServerError).type).toBe('api_error');
  });

  it('fails every request with alwaysFail', async () => {
    const { sim, client } = await setup({ alwaysFail: 529, retryAfterSeconds: 0.01 }, 2);
    const error = await client.beta.messages.create(params).catch((caught: unknown) => caught);
    expect((error as APIError).status).toBe(529);
    expect(sim.requests).toBe(3);
  });

  it('cuts a stream mid-way: the SDK raises a terminated-connection error, not an APIError', async () => {
    const { client } = await setup({ cutStreamOn: [1] });
    const stream = client.beta.messages.stream(params);
    const error = await stream.finalMessage().catch((caught: unknown) => caught);
    // Not an APIError and not retried by the SDK: undici's "terminated", wrapped in AnthropicError.
    expect(error).toBeInstanceOf(AnthropicError);
    expect(error).not.toBeInstanceOf(APIError);
    expect((error as Error).message).toMatch(/terminated/);
    // The stream started (message_start arrived) before the connection dropped.
    expect(stream.currentMessage?.id ?? '').toMatch(/^msg_sim_/);
  });

  it('cuts a non-streaming body mid-way: the request fails, and a retry after it succeeds', async () => {
    const { sim, client } = await setup({ cutStreamOn: [1] });
    const error = await client.beta.messages.create(params).catch((caught: unknown) => caught);
    // The headers arrived, so the SDK does not retry; reading the body fails with a bare TypeError.
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/terminated/);
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('end_turn');
    expect(sim.received[0]?.fault).toBe('cut-stream');
  });

  it('sends an SSE error event mid-stream (the SDK raises an APIError of type overloaded_error), a 529 without stream', async () => {
    const { client } = await setup({ streamErrorOn: [1, 2] });
    const error = await client.beta.messages
      .stream(params)
      .finalMessage()
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).type).toBe('overloaded_error');
    const plain = await client.beta.messages.create(params).catch((caught: unknown) => caught);
    expect((plain as APIError).status).toBe(529);
  });

  it('stalls request N until releaseStalls, then answers it', async () => {
    const { sim, client } = await setup({ stallOn: [1] });
    let settled = false;
    const pending = client.beta.messages.create(params).finally(() => {
      settled = true;
    });
    await sim.waitForStalled(1);
    expect(settled).toBe(false);
    expect(sim.stats().stalled).toBe(1);
    sim.releaseStalls();
    const message = await pending;
    expect(message.stop_reason).toBe('end_turn');
  });

  it('stallNextWork holds the next N requests that continue a session (not its first turn, not its end-of-session turn)', async () => {
    const { sim, client } = await setup({ stallNextWork: 1 });
    const user = (text: string) => ({ role: 'user' as const, content: text });
    const assistant = { role: 'assistant' as const, content: 'Working on it.' };
    const firstTurn = { ...params, messages: [user('Start the session.')] };
    const endOfSession = {
      ...params,
      messages: [
        user('Start the session.'),
        assistant,
        user('<baton_end_of_session reason="cancelled">Update the progress log.'),
      ],
    };
    const midWork = {
      ...params,
      messages: [user('Start the session.'), assistant, user('Go on.')],
    };
    // A session's first turn and an end-of-session turn pass and do not count.
    await expect(client.beta.messages.create(firstTurn)).resolves.toMatchObject({
      type: 'message',
    });
    await expect(client.beta.messages.create(endOfSession)).resolves.toMatchObject({
      type: 'message',
    });
    expect(sim.stats().faults).toEqual({ stallNextWork: 1 });
    const parked = client.beta.messages.create(midWork);
    await sim.waitForStalled(1);
    expect(sim.stats().faults).toEqual({ stallNextWork: 0 });
    // The count is used up: the next mid-work request is answered at once.
    await expect(client.beta.messages.create(midWork)).resolves.toMatchObject({
      type: 'message',
    });
    expect(sim.stats().stalled).toBe(1);
    sim.releaseStalls();
    await expect(parked).resolves.toMatchObject({ type: 'message' });
  });

  it('nextWorkFaults gives the next mid-work requests one fault each, in order, and records when each arrived', async () => {
    const { sim, client } = await setup({
      nextWorkFaults: ['rate_limit', 'unauthorized', 'empty_reply', 'max_tokens'],
      retryAfterSeconds: 0.2,
    });
    const user = (text: string) => ({ role: 'user' as const, content: text });
    const midWork = {
      ...params,
      messages: [
        user('Start the session.'),
        { role: 'assistant' as const, content: 'On it.' },
        user('Go on.'),
      ],
    };
    // A first turn takes none of them.
    await expect(client.beta.messages.create(params)).resolves.toMatchObject({ type: 'message' });
    await expect(client.beta.messages.create(midWork)).rejects.toBeInstanceOf(RateLimitError);
    await expect(client.beta.messages.create(midWork)).rejects.toMatchObject({ status: 401 });
    const empty = await client.beta.messages.create(midWork);
    expect(empty).toMatchObject({ content: [], stop_reason: 'end_turn' });
    const cut = await client.beta.messages.create(midWork);
    expect(cut.stop_reason).toBe('max_tokens');
    await expect(client.beta.messages.create(midWork)).resolves.toMatchObject({
      stop_reason: 'end_turn',
    });
    expect(sim.stats().faults).toEqual({ nextWorkFaults: [], retryAfterSeconds: 0.2 });
    expect(sim.received.map((record) => [record.status, record.fault ?? null])).toEqual([
      [200, null],
      [429, 'rate-limit'],
      [401, 'unauthorized'],
      [200, 'empty-reply'],
      [200, 'max-tokens'],
      [200, null],
    ]);
    const times = sim.received.map((record) => record.at);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(sim.received.every((record) => record.maxTokens === params.max_tokens)).toBe(true);
  });

  it('releases stalls through POST /_sim/release and sets faults through POST /_sim/faults', async () => {
    const { sim, client } = await setup({});
    const set = await fetch(`${sim.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ stallOn: [1] }),
    });
    expect(set.status).toBe(200);
    const pending = client.beta.messages.create(params);
    await sim.waitForStalled(1);
    const released = await fetch(`${sim.url}/_sim/release`, { method: 'POST' });
    expect(await released.json()).toEqual({ released: 1 });
    await expect(pending).resolves.toMatchObject({ stop_reason: 'end_turn' });
    const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as {
      requests: number;
      faults: unknown;
    };
    expect(stats.requests).toBe(1);
    expect(stats.faults).toEqual({ stallOn: [1] });
    const bad = await fetch(`${sim.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ stallOn: 'x' }),
    });
    expect(bad.status).toBe(400);
  });

  it('close() ends a stalled request promptly', async () => {
    const { sim: server, client } = await setup({ stallOn: [1] });
    const pending = client.beta.messages.create(params).catch((caught: unknown) => caught);
    await server.waitForStalled(1);
    const started = Date.now();
    await server.close();
    expect(await pending).toBeInstanceOf(APIConnectionError);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('answers stop_reason max_tokens with a cut-off text and no tool call', async () => {
    const { client } = await setup({ maxTokensOn: [1] });
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage.output_tokens).toBe(256);
    expect(message.content.every((block) => block.type === 'text')).toBe(true);
  });

  it('stops at max_tokens on its own when the reply is longer than the request allows', async () => {
    const { client } = await setup({});
    const message = await client.beta.messages.create({ ...params, max_tokens: 2 });
    expect(message.stop_reason).toBe('max_tokens');
    const block = message.content[0];
    expect(block?.type === 'text' && block.text.length).toBeLessThanOrEqual(8);
  });

  it('answers stop_reason refusal with refusal stop_details, streaming too', async () => {
    const { client } = await setup({ refusalOn: [1, 2] });
    const message = await client.beta.messages.create(params);
    expect(message.stop_reason).toBe('refusal');
    expect(message.stop_details?.type).toBe('refusal');
    const streamed = await client.beta.messages.stream(params).finalMessage();
    expect(streamed.stop_reason).toBe('refusal');
  });

  it('answers pause_turn (text only) and model_context_window_exceeded on request', async () => {
    const { client } = await setup({ pauseTurnOn: [1], contextWindowExceededOn: [2] });
    const paused = await client.beta.messages.create(params);
    expect(paused.stop_reason).toBe('pause_turn');
    expect(paused.content.every((block) => block.type === 'text')).toBe(true);
    // Sending the history again, ending with the paused turn, goes on.
    const resumed = await client.beta.messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: paused.content }],
    });
    expect(resumed.stop_reason).toBe('model_context_window_exceeded');
  });

  it('paces stream events with eventDelayMs: text arrives before the message ends, and an abort mid-stream works', async () => {
    const { client } = await setup({ eventDelayMs: 40 });
    const stream = client.beta.messages.stream(params);
    const firstText = new Promise<number>((resolve) =>
      stream.once('text', () => resolve(Date.now())),
    );
    const message = await stream.finalMessage();
    const ended = Date.now();
    expect(ended - (await firstText)).toBeGreaterThanOrEqual(80);
    expect(message.stop_reason).toBe('end_turn');

    const aborted = client.beta.messages.stream(params);
    aborted.once('text', () => aborted.abort());
    const error = await aborted.finalMessage().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
  });

  it('adds latency before answering', async () => {
    const { client } = await setup({ latencyMs: 150 });
    const started = Date.now();
    await client.beta.messages.create(params);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('rejects invalid faults', async () => {
    await expect(startModelSim({ faults: { rateLimitOn: [0] } })).rejects.toThrow(/rateLimitOn/);
  });
});
