import type { SimScriptRequest } from '@baton/model-sim';
import { estimateCostUsd, priceForModel } from '@baton/context-config';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  runSession,
  type RunSessionOptions,
  type SessionEvent,
  type TranscriptEnd,
  type TranscriptMessage,
} from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

const PRIMARY = 'claude-opus-4-1';
const FALLBACK = 'claude-haiku-4-5';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

/** An initialised project; `models()` lists the model of every later request, faulted ones too. */
async function initialised(onRequest?: (request: SimScriptRequest, h: Harness) => void) {
  // The script runs inside the harness it belongs to, so it reaches the harness through this.
  const created: { harness?: Harness } = {};
  const h = await createHarness(
    {
      script: (request) => {
        if (created.harness !== undefined) onRequest?.(request, created.harness);
        return undefined;
      },
    },
    { initialised: true },
  );
  created.harness = h;
  harness = h;
  const before = h.sim.requests;
  const models = () =>
    h.sim.received
      .filter((record) => record.path === '/v1/messages' && record.number > before)
      .map((record) => record.model);
  return { h, models };
}

const ofType = <T extends SessionEvent['type']>(events: SessionEvent[], type: T) =>
  events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);

/** Resumes the project as session 2 on PRIMARY, FALLBACK its fallback, with `maxRetries` 1 ms retries. */
function resumeWithFallback(
  h: Harness,
  maxRetries: number,
  overrides: Partial<RunSessionOptions> = {},
) {
  return runSession(
    h.options({
      sessionNumber: 2,
      model: PRIMARY,
      fallbackModel: FALLBACK,
      retry: { maxRetries, baseDelayMs: 1 },
      ...overrides,
    }),
  );
}

/** A turn's usage in the API's shape, as `estimateCostUsd` prices it. */
const apiUsage = ({ usage }: Extract<SessionEvent, { type: 'turn' }>) => ({
  input_tokens: usage.inputTokens,
  output_tokens: usage.outputTokens,
  cache_read_input_tokens: usage.cacheReadInputTokens,
  cache_creation_input_tokens: usage.cacheCreationInputTokens,
});

describe('a fallback model continues a session whose model stays overloaded', () => {
  it('moves to the fallback after the retries, records it, and prices its turns at its prices', async () => {
    const { h, models } = await initialised();
    h.sim.setFaults({ overloadedModels: [PRIMARY] });
    const result = await resumeWithFallback(h, 2);
    expect(result).toMatchObject({ outcome: 'completed', flippedFeatures: ['F1'] });
    expect(result.fallback).toMatchObject({ from: PRIMARY, to: FALLBACK, turn: 1 });
    // The first request and its two retries reached the overloaded model, the rest the fallback.
    expect(models().slice(0, 3)).toEqual([PRIMARY, PRIMARY, PRIMARY]);
    expect(new Set(models().slice(3))).toEqual(new Set([FALLBACK]));
    expect(ofType(h.events, 'api-retry').map((event) => event.status)).toEqual([529, 529]);
    const fallbacks = ofType(h.events, 'model-fallback');
    expect(fallbacks).toEqual([
      expect.objectContaining({ from: PRIMARY, to: FALLBACK, turn: 1, status: 529 }),
    ]);
    expect(fallbacks[0]?.message).toMatch(/overloaded/i);
    const turns = ofType(h.events, 'turn');
    expect(turns.length).toBeGreaterThan(1);
    expect(turns.every((turn) => turn.model === FALLBACK)).toBe(true);
    // Haiku's prices, not Opus's: the same usage at Opus prices would cost 15x as much.
    expect(priceForModel(FALLBACK).inputPerMTok).not.toBe(priceForModel(PRIMARY).inputPerMTok);
    for (const turn of turns) {
      expect(turn.costUsd).toBeCloseTo(estimateCostUsd(FALLBACK, apiUsage(turn)), 12);
    }
    expect(result.usage.costUsd).toBeCloseTo(
      turns.reduce((sum, turn) => sum + turn.costUsd, 0),
      12,
    );
  });

  it('keeps the turns before the fallback at the primary model prices', async () => {
    let answered = 0;
    const { h, models } = await initialised((request, self) => {
      // The primary model answers two requests, then stays overloaded.
      if (request.params.model === PRIMARY && ++answered === 2) {
        self.sim.setFaults({ overloadedModels: [PRIMARY] });
      }
    });
    const messages: TranscriptMessage[] = [];
    let end: TranscriptEnd | undefined;
    const result = await resumeWithFallback(h, 1, {
      transcript: {
        start: async () => undefined,
        append: async (_id, appended) => void messages.push(...appended),
        end: async (_id, ended) => void (end = ended),
      },
    });
    expect(result.outcome).toBe('completed');
    expect(result.fallback).toMatchObject({ from: PRIMARY, to: FALLBACK, turn: 3 });
    // The transcript says which model answered each turn, and that the session fell back.
    const answeredBy = messages.filter((message) => message.role === 'assistant');
    expect(answeredBy.map((message) => message.model).slice(0, 3)).toEqual([
      PRIMARY,
      PRIMARY,
      FALLBACK,
    ]);
    expect(end?.fallback).toEqual(result.fallback);
    expect(models().slice(0, 4)).toEqual([PRIMARY, PRIMARY, PRIMARY, PRIMARY]);
    const turns = ofType(h.events, 'turn');
    expect(turns.map((turn) => turn.model).slice(0, 3)).toEqual([PRIMARY, PRIMARY, FALLBACK]);
    const expected = turns.reduce(
      (sum, turn) => sum + estimateCostUsd(turn.model, apiUsage(turn)),
      0,
    );
    expect(result.usage.costUsd).toBeCloseTo(expected, 12);
  });

  it('also falls back on an overloaded_error event in the middle of a stream (no status)', async () => {
    const { h, models } = await initialised();
    const n = h.sim.requests;
    h.sim.setFaults({ streamErrorOn: [n + 1, n + 2] });
    const result = await resumeWithFallback(h, 1, { streaming: true });
    expect(result.outcome).toBe('completed');
    expect(models().slice(0, 3)).toEqual([PRIMARY, PRIMARY, FALLBACK]);
    const [fallback] = ofType(h.events, 'model-fallback');
    expect(fallback).toMatchObject({ from: PRIMARY, to: FALLBACK, turn: 1 });
    expect(fallback?.status).toBeUndefined();
  });

  it('does not fall back for an error that is not an overload', async () => {
    const { h } = await initialised();
    h.sim.setFaults({ alwaysFail: 500 });
    const result = await resumeWithFallback(h, 1);
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error', turns: 0 });
    expect(result.fallback).toBeUndefined();
    expect(ofType(h.events, 'model-fallback')).toEqual([]);
  });

  it('fails as before when the fallback model is overloaded too (one fallback per session)', async () => {
    const { h, models } = await initialised();
    h.sim.setFaults({ overloadedModels: [PRIMARY, FALLBACK] });
    const result = await resumeWithFallback(h, 1);
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error', turns: 0 });
    expect(result.error).toMatch(/529/);
    expect(models()).toEqual([PRIMARY, PRIMARY, FALLBACK, FALLBACK]);
    expect(ofType(h.events, 'model-fallback')).toHaveLength(1);
  });

  it('without a fallback model an overloaded model fails the session as before', async () => {
    const { h, models } = await initialised();
    h.sim.setFaults({ overloadedModels: [PRIMARY] });
    const result = await runSession(
      h.options({ sessionNumber: 2, model: PRIMARY, retry: { maxRetries: 1, baseDelayMs: 1 } }),
    );
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'api_error', turns: 0 });
    expect(models()).toEqual([PRIMARY, PRIMARY]);
    expect(result.fallback).toBeUndefined();
  });
});
