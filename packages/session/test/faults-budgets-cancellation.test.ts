import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession, type SessionEvent } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

function lastUserText(request: SimScriptRequest): string {
  const messages: BetaMessageParam[] = request.params.messages;
  const last = messages[messages.length - 1];
  if (last === undefined) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content ?? []).map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

/** A harness whose project is already initialised; `seen` records every later request. */
async function initialised() {
  const seen: SimScriptRequest[] = [];
  const h = await createHarness(
    {
      script: (request) => {
        seen.push(request);
        return undefined;
      },
    },
    { initialised: true },
  );
  harness = h;
  return { h, seen };
}

const retries = (events: SessionEvent[]) =>
  events.flatMap((event) => (event.type === 'api-retry' ? [event] : []));

describe('API faults are retried with backoff', () => {
  it('429, 529, 500 and a cut stream are each retried and the session completes; sessions stream by default', async () => {
    const { h } = await initialised();
    const n = h.sim.requests;
    h.sim.setFaults({
      rateLimitOn: [n + 1],
      overloadedOn: [n + 3],
      serverErrorOn: [n + 5],
      cutStreamOn: [n + 7],
    });
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    expect(retries(h.events).map((event) => event.status)).toEqual([429, 529, 500, undefined]);
    expect(retries(h.events).every((event) => event.attempt === 1)).toBe(true);
    const requests = h.sim.received.filter((record) => record.number > n);
    expect(requests.every((record) => record.stream)).toBe(true);
  });

  it("streaming 'auto' streams when maxTokens is above the non-streaming limit; a mid-stream error event and a cut stream are retried", async () => {
    const { h } = await initialised();
    const n = h.sim.requests;
    h.sim.setFaults({ streamErrorOn: [n + 2], cutStreamOn: [n + 4] });
    const result = await runSession(
      h.options({ sessionNumber: 2, maxTokens: 32_000, streaming: 'auto' }),
    );
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    expect(retries(h.events)).toHaveLength(2);
    const requests = h.sim.received.filter((record) => record.number > n);
    expect(requests.length).toBeGreaterThan(3);
    expect(requests.every((record) => record.stream)).toBe(true);
  });

  it('streaming: false with a large maxTokens fails with the SDK reason; a bad streaming value is refused', async () => {
    const { h } = await initialised();
    const before = h.sim.requests;
    const result = await runSession(
      h.options({ sessionNumber: 2, maxTokens: 32_000, streaming: false }),
    );
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error', turns: 0 });
    expect(result.error).toMatch(/Streaming is required/u);
    expect(h.sim.requests).toBe(before);
    await expect(
      runSession(h.options({ sessionNumber: 2, streaming: 'yes' as never })),
    ).rejects.toThrow(/streaming must be true, false or 'auto'/u);
  });

  it('honours retry-after', async () => {
    const { h } = await initialised();
    h.sim.setFaults({ rateLimitOn: [h.sim.requests + 1], retryAfterSeconds: 1 });
    const started = Date.now();
    const result = await runSession(
      h.options({ sessionNumber: 2, retry: { baseDelayMs: 1, maxDelayMs: 5_000 } }),
    );
    expect(result.outcome).toBe('completed');
    expect(retries(h.events)[0]).toMatchObject({ status: 429, delayMs: 1_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('gives up after maxRetries: outcome failed, api_error, no end-of-session turn', async () => {
    const { h } = await initialised();
    const before = h.sim.requests;
    h.sim.setFaults({ alwaysFail: 529 });
    const result = await runSession(
      h.options({ sessionNumber: 2, retry: { maxRetries: 2, baseDelayMs: 1 } }),
    );
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error', turns: 0 });
    expect(result.error).toMatch(/529/);
    expect(h.sim.requests - before).toBe(3);
    expect(retries(h.events)).toHaveLength(2);
  });

  it('does not retry a 400', async () => {
    const { h } = await initialised();
    const before = h.sim.requests;
    const result = await runSession(h.options({ sessionNumber: 2, maxTokens: -5 }));
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error' });
    expect(h.sim.requests - before).toBe(1);
  });
});

describe('budgets end the session after an end-of-session turn', () => {
  it.each([
    ['max_turns', { maxTurns: 2 }],
    ['max_input_tokens', { maxInputTokens: 1 }],
    ['max_output_tokens', { maxOutputTokens: 1 }],
    ['max_usd', { maxUsd: 0.000_001 }],
  ] as const)('%s', async (reason, budgets) => {
    const { h, seen } = await initialised();
    // The simulator at Sonnet's prices (`sim` costs nothing), so max_usd can be reached.
    const result = await runSession(h.options({ sessionNumber: 2, budgets, model: 'sim-sonnet' }));
    expect(result).toMatchObject({ outcome: 'budget_exhausted', stopReason: reason });
    const endRequests = seen.filter((request) =>
      lastUserText(request).includes(`<baton_end_of_session reason="${reason}">`),
    );
    expect(endRequests).toHaveLength(1);
    expect(await h.store.read('progress.md')).toContain('Session 2 end');
    expect(h.events.some((event) => event.type === 'turn' && event.phase === 'end')).toBe(true);
  });

  it('wall_clock aborts the request in flight, then runs the end-of-session turn', async () => {
    const { h, seen } = await initialised();
    h.sim.setFaults({ stallOn: [h.sim.requests + 2] });
    const started = Date.now();
    const result = await runSession(h.options({ sessionNumber: 2, budgets: { wallClockMs: 700 } }));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({ outcome: 'budget_exhausted', stopReason: 'wall_clock' });
    expect(
      seen.some((request) =>
        lastUserText(request).includes('<baton_end_of_session reason="wall_clock">'),
      ),
    ).toBe(true);
  });
});

describe('cancellation through an AbortSignal', () => {
  it('aborts the request in flight, runs the end-of-session turn and reports cancelled', async () => {
    const { h, seen } = await initialised();
    h.sim.setFaults({ stallOn: [h.sim.requests + 4] });
    const controller = new AbortController();
    const pending = runSession(h.options({ sessionNumber: 2, signal: controller.signal }));
    await h.sim.waitForStalled(1, 10_000);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ outcome: 'cancelled', stopReason: 'cancelled' });
    expect(result.reason).toBe('The session was cancelled.');
    expect(
      seen.some((request) =>
        lastUserText(request).includes('<baton_end_of_session reason="cancelled">'),
      ),
    ).toBe(true);
    expect(await h.store.read('progress.md')).toContain('Session 2 end');
    expect(result.checkpoint).toMatchObject({ pushed: true });
    expect(result.checkpoint?.head).toMatch(/^[0-9a-f]{40}$/);
  });

  it.each(['lease_lost', 'lock_lost'])(
    'aborted with %s (another worker may run the project now) it asks the model nothing more',
    async (why) => {
      const { h, seen } = await initialised();
      h.sim.setFaults({ stallOn: [h.sim.requests + 4] });
      const controller = new AbortController();
      const pending = runSession(h.options({ sessionNumber: 2, signal: controller.signal }));
      await h.sim.waitForStalled(1, 10_000);
      const asked = seen.length;
      controller.abort(why);
      const result = await pending;
      expect(result).toMatchObject({ outcome: 'cancelled', stopReason: 'cancelled' });
      expect(result.reason).toBe(
        'The session stopped: it lost the project to another worker (lease or job lock lost).',
      );
      // The held request was the last: no end-of-session turn, no retry.
      expect(seen).toHaveLength(asked);
      expect(seen.some((request) => lastUserText(request).includes('<baton_end_of_session'))).toBe(
        false,
      );
    },
  );

  it('the end-of-session turn has its own timeout', async () => {
    const { h } = await initialised();
    const n = h.sim.requests;
    h.sim.setFaults({ stallOn: [n + 2, n + 3] });
    const controller = new AbortController();
    const started = Date.now();
    const pending = runSession(
      h.options({ sessionNumber: 2, signal: controller.signal, endOfSessionTimeoutMs: 300 }),
    );
    await h.sim.waitForStalled(1, 10_000);
    controller.abort();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.outcome).toBe('cancelled');
    expect(result.reason).toContain('The end-of-session turn ran out of time.');
  });

  it('an already aborted signal sends nothing', async () => {
    const { h } = await initialised();
    const before = h.sim.requests;
    const result = await runSession(h.options({ sessionNumber: 2, signal: AbortSignal.abort() }));
    expect(result).toMatchObject({ outcome: 'cancelled', turns: 0 });
    expect(h.sim.requests).toBe(before);
  });
});

describe('hand-over between sessions', () => {
  it('a resume after an interrupted session says so in its first message', async () => {
    const { h, seen } = await initialised();
    const result = await runSession(h.options({ sessionNumber: 4, interrupted: true }));
    expect(result.outcome).toBe('completed');
    const first = seen[0]!.params.messages[0]!;
    const text =
      typeof first.content === 'string'
        ? first.content
        : (first.content ?? [])
            .map((block) => (block.type === 'text' ? block.text : ''))
            .join('\n');
    expect(text.split('\n')[0]).toBe(
      '<baton_session kind="resume" project="todo" session="4" interrupted="true">',
    );
    expect(text).toContain('interrupted before it could finish');
    const start = h.events[0];
    expect(start).toMatchObject({
      type: 'session-start',
      interrupted: true,
      sessionNumber: 4,
      kind: 'resume',
    });
  });
});
