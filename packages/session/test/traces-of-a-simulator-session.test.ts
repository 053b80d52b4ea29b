import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession, type SessionEvent } from '../src/index.js';
import { createSessionTracing } from '../src/tracing/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
afterEach(async () => {
  exporter.reset();
  await harness?.close();
  harness = undefined;
});
afterAll(async () => {
  await provider.shutdown();
  await removeTemplate();
});

/** Runs one session with every event going to a tracing sink as well. */
async function tracedSession(
  h: Harness,
  overrides: Parameters<Harness['options']>[0] = {},
): Promise<{ events: SessionEvent[]; spans: ReadableSpan[] }> {
  const tracing = createSessionTracing({ tracer: provider.getTracer('test') });
  const events: SessionEvent[] = [];
  await runSession(
    h.options({
      sessionNumber: 2,
      ...overrides,
      onEvent: (event) => {
        events.push(event);
        tracing.record(event);
      },
    }),
  );
  return { events, spans: exporter.getFinishedSpans() };
}

const ms = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
const ofType = <T extends SessionEvent['type']>(events: SessionEvent[], type: T) =>
  events.filter((event): event is Extract<SessionEvent, { type: T }> => event.type === type);

describe('OpenTelemetry spans of a session', () => {
  it('session -> model request -> tool call, with GenAI attributes from the real usage', async () => {
    harness = await createHarness({}, { initialised: true });
    const { events, spans } = await tracedSession(harness);
    const end = ofType(events, 'session-end')[0]!;

    const sessions = spans.filter((span) => span.name === 'invoke_agent baton');
    expect(sessions).toHaveLength(1);
    const session = sessions[0]!;
    expect(parentOf(session)).toBeUndefined();
    expect(session.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'baton',
      'gen_ai.conversation.id': end.sessionId,
      'gen_ai.request.model': 'sim',
      'baton.project.id': 'todo',
      'baton.session.kind': 'resume',
      'baton.session.number': 2,
      'baton.session.outcome': end.result.outcome,
      'baton.session.turns': end.result.turns,
      'gen_ai.usage.output_tokens': end.result.usage.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': end.result.usage.cacheReadInputTokens,
    });
    expect(session.status.code).not.toBe(SpanStatusCode.ERROR);

    const requests = spans.filter((span) => span.name === 'chat sim');
    const turns = ofType(events, 'turn');
    expect(requests).toHaveLength(turns.length);
    expect(requests.length).toBeGreaterThan(1);
    for (const [index, turn] of turns.entries()) {
      const span = requests.find((candidate) => candidate.attributes['baton.turn'] === turn.turn);
      expect(span, `span of turn ${index + 1}`).toBeDefined();
      expect(span!.kind).toBe(SpanKind.CLIENT);
      expect(parentOf(span!)).toBe(session.spanContext().spanId);
      expect(span!.spanContext().traceId).toBe(session.spanContext().traceId);
      const usage = turn.usage;
      expect(span!.attributes).toEqual(
        expect.objectContaining({
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'sim',
          'gen_ai.response.model': 'sim',
          'gen_ai.response.id': turn.responseId,
          'gen_ai.response.finish_reasons': [turn.stopReason],
          'gen_ai.usage.input_tokens':
            usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
          'gen_ai.usage.output_tokens': usage.outputTokens,
          'gen_ai.usage.cache_read.input_tokens': usage.cacheReadInputTokens,
          'gen_ai.usage.cache_creation.input_tokens': usage.cacheCreationInputTokens,
        }),
      );
      expect(span!.attributes['gen_ai.response.id']).toMatch(/^msg_sim_/);
      // The request lies within the session and lasted as long as the turn event says.
      expect(ms(span!.startTime)).toBeGreaterThanOrEqual(ms(session.startTime));
      expect(ms(span!.endTime)).toBeLessThanOrEqual(ms(session.endTime));
      expect(ms(span!.duration)).toBeCloseTo(turn.durationMs, 0);
    }
    // Caching is on: later requests read from the cache, and the spans say so.
    expect(
      requests.some((span) => Number(span.attributes['gen_ai.usage.cache_read.input_tokens']) > 0),
    ).toBe(true);

    const toolCalls = ofType(events, 'tool-call');
    const tools = spans.filter((span) => span.name.startsWith('execute_tool '));
    expect(tools).toHaveLength(toolCalls.length);
    expect(tools.length).toBeGreaterThan(0);
    for (const tool of tools) {
      const request = requests.find((span) => span.spanContext().spanId === parentOf(tool));
      expect(request, `parent of ${tool.name}`).toBeDefined();
      // A tool call's parent is the request whose response asked for it.
      expect(request!.attributes['baton.turn']).toBe(tool.attributes['baton.turn']);
      expect(ms(tool.startTime)).toBeGreaterThanOrEqual(ms(request!.endTime) - 1);
      expect(tool.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool.name.slice('execute_tool '.length),
      });
      expect(tool.attributes['gen_ai.tool.call.id']).toMatch(/^toolu_/);
    }
    expect(new Set(tools.map((span) => span.name))).toEqual(
      new Set(toolCalls.map((event) => `execute_tool ${event.tool}`)),
    );
  });

  it('a fallback shows on the session span and as events of the first request to the fallback', async () => {
    harness = await createHarness({}, { initialised: true });
    harness.sim.setFaults({ overloadedModels: ['claude-opus-4-1'] });
    const { spans } = await tracedSession(harness, {
      model: 'claude-opus-4-1',
      fallbackModel: 'claude-haiku-4-5',
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    const session = spans.find((span) => span.name === 'invoke_agent baton')!;
    expect(session.attributes).toMatchObject({
      'gen_ai.request.model': 'claude-opus-4-1',
      'baton.fallback.from': 'claude-opus-4-1',
      'baton.fallback.to': 'claude-haiku-4-5',
    });
    const requests = spans.filter((span) => span.name.startsWith('chat '));
    expect(new Set(requests.map((span) => span.name))).toEqual(new Set(['chat claude-haiku-4-5']));
    const first = requests.find((span) => span.attributes['baton.turn'] === 1)!;
    expect(first.events.map((event) => event.name)).toEqual(['api-retry', 'model-fallback']);
    expect(first.events[1]?.attributes).toMatchObject({
      'baton.fallback.from': 'claude-opus-4-1',
      'http.response.status_code': 529,
    });
  });

  it('a failed session ends its span with an error status and its retries as events', async () => {
    harness = await createHarness({}, { initialised: true });
    harness.sim.setFaults({ alwaysFail: 500 });
    const { spans } = await tracedSession(harness, { retry: { maxRetries: 2, baseDelayMs: 1 } });
    expect(spans.map((span) => span.name)).toEqual(['invoke_agent baton']);
    const session = spans[0]!;
    expect(session.status.code).toBe(SpanStatusCode.ERROR);
    expect(session.attributes).toMatchObject({
      'baton.session.outcome': 'failed',
      'error.type': 'api_error',
    });
    expect(session.events.map((event) => event.name)).toEqual(['api-retry', 'api-retry']);
  });
});
