import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { redactThenCut } from '@baton/core';
import type { SessionEvent } from '../types.js';
import { BATON, ERROR_TYPE, GEN_AI, GEN_AI_OPERATIONS } from './attributes.js';

/** Options of `createSessionTracing`. */
export interface SessionTracingOptions {
  /** Where the spans go: a tracer of a configured `TracerProvider`. */
  tracer: Tracer;
  /**
   * Most sessions followed at once; past it the oldest is ended (a session whose process crashed
   * never sends its end). Default 1000.
   */
  maxOpenSessions?: number;
}

/**
 * Turns one process's `SessionEvent`s into spans: `invoke_agent baton` per session, a
 * `chat <model>` client span per model request under it, and an `execute_tool <tool>` span per
 * tool call under the request that asked for it.
 */
export interface SessionTracing {
  /** Feed it every event (`onEvent`); it never throws and never waits. */
  record(event: SessionEvent): void;
  /** Ends the spans of the sessions still open (at shutdown). */
  endAll(): void;
}

/** A span event waiting for the request span it belongs to (retries and fallbacks come first). */
interface PendingEvent {
  name: string;
  attributes: Attributes;
  at: number;
}

interface OpenSession {
  span: Span;
  context: Context;
  /** Contexts of the latest requests' spans by turn, for the tool calls each asked for. */
  turns: Map<number, Context>;
  pending: PendingEvent[];
}

/** Tool calls belong to the latest request; older turns are kept only for stragglers. */
const TURNS_KEPT = 4;

type EventOf<T extends SessionEvent['type']> = Extract<SessionEvent, { type: T }>;

/**
 * Spans are built from events after the fact, with the times the events carry, so the session
 * loop has nothing to do with tracing and a process without tracing pays nothing for it.
 */
export function createSessionTracing(options: SessionTracingOptions): SessionTracing {
  const tracer = options.tracer;
  const maxOpen = options.maxOpenSessions ?? 1000;
  const open = new Map<string, OpenSession>();

  const start = (event: EventOf<'session-start'>) => {
    if (open.size >= maxOpen) {
      const [oldest] = open.keys();
      if (oldest !== undefined) end(oldest, event.at);
    }
    const span = tracer.startSpan(
      `${GEN_AI_OPERATIONS.invokeAgent} baton`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(event.at),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATIONS.invokeAgent,
          [GEN_AI.providerName]: 'anthropic',
          [GEN_AI.agentName]: 'baton',
          [GEN_AI.conversationId]: event.sessionId,
          [GEN_AI.requestModel]: event.model,
          [BATON.projectId]: event.projectId,
          [BATON.sessionId]: event.sessionId,
          [BATON.sessionKind]: event.kind,
          [BATON.sessionNumber]: event.sessionNumber,
        },
      },
      ROOT_CONTEXT,
    );
    open.set(event.sessionId, {
      span,
      context: trace.setSpan(ROOT_CONTEXT, span),
      turns: new Map(),
      pending: [],
    });
  };

  const request = (session: OpenSession, event: EventOf<'turn'>) => {
    const usage = event.usage;
    const span = tracer.startSpan(
      `${GEN_AI_OPERATIONS.chat} ${event.model}`,
      {
        kind: SpanKind.CLIENT,
        startTime: new Date(event.at - event.durationMs),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATIONS.chat,
          [GEN_AI.providerName]: 'anthropic',
          [GEN_AI.conversationId]: event.sessionId,
          [GEN_AI.requestModel]: event.model,
          [GEN_AI.responseModel]: event.responseModel,
          [GEN_AI.responseId]: event.responseId,
          [GEN_AI.responseFinishReasons]: [event.stopReason],
          [GEN_AI.usageInputTokens]:
            usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
          [GEN_AI.usageOutputTokens]: usage.outputTokens,
          [GEN_AI.usageCacheReadInputTokens]: usage.cacheReadInputTokens,
          [GEN_AI.usageCacheCreationInputTokens]: usage.cacheCreationInputTokens,
          [BATON.uncachedInputTokens]: usage.inputTokens,
          [BATON.turn]: event.turn,
          [BATON.phase]: event.phase,
          [BATON.costUsd]: event.costUsd,
        },
      },
      session.context,
    );
    for (const pending of session.pending.splice(0)) {
      span.addEvent(pending.name, pending.attributes, new Date(pending.at));
    }
    span.end(new Date(event.at));
    session.turns.set(event.turn, trace.setSpan(session.context, span));
    for (const turn of session.turns.keys()) {
      if (session.turns.size <= TURNS_KEPT) break;
      session.turns.delete(turn);
    }
  };

  const toolCall = (session: OpenSession, event: EventOf<'tool-call'>) => {
    const span = tracer.startSpan(
      `${GEN_AI_OPERATIONS.executeTool} ${event.tool}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: new Date(event.at - event.durationMs),
        attributes: {
          [GEN_AI.operationName]: GEN_AI_OPERATIONS.executeTool,
          [GEN_AI.toolName]: event.tool,
          [GEN_AI.toolType]: 'function',
          [BATON.turn]: event.turn,
          [BATON.toolSummary]: event.summary,
          // eslint-disable-next-line no-restricted-syntax -- OpenTelemetry exports an undefined attribute
          ...(event.toolUseId === undefined ? {} : { [GEN_AI.toolCallId]: event.toolUseId }),
        },
      },
      session.turns.get(event.turn) ?? session.context,
    );
    if (event.isError) {
      span.setAttribute(ERROR_TYPE, 'tool_error');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(new Date(event.at));
  };

  const end = (sessionId: string, at: number, result?: EventOf<'session-end'>['result']) => {
    const session = open.get(sessionId);
    if (session === undefined) return;
    open.delete(sessionId);
    const span = session.span;
    for (const pending of session.pending.splice(0)) {
      span.addEvent(pending.name, pending.attributes, new Date(pending.at));
    }
    if (result !== undefined) {
      const usage = result.usage;
      span.setAttributes({
        [BATON.sessionOutcome]: result.outcome,
        [BATON.sessionTurns]: result.turns,
        [BATON.costUsd]: usage.costUsd,
        [GEN_AI.usageInputTokens]:
          usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
        [GEN_AI.usageOutputTokens]: usage.outputTokens,
        [GEN_AI.usageCacheReadInputTokens]: usage.cacheReadInputTokens,
        [GEN_AI.usageCacheCreationInputTokens]: usage.cacheCreationInputTokens,
        // eslint-disable-next-line no-restricted-syntax -- OpenTelemetry exports an undefined attribute
        ...(result.stopReason === undefined
          ? {}
          : { [BATON.sessionStopReason]: result.stopReason }),
      });
      if (result.outcome === 'failed') {
        span.setAttribute(ERROR_TYPE, result.stopReason ?? 'failed');
        span.setStatus({ code: SpanStatusCode.ERROR, message: redactThenCut(result.reason, 200) });
      }
    }
    span.end(new Date(result?.endedAt ?? at));
  };

  const record = (event: SessionEvent) => {
    if (event.type === 'session-start') return start(event);
    const session = open.get(event.sessionId);
    if (session === undefined) return;
    switch (event.type) {
      case 'turn':
        return request(session, event);
      case 'tool-call':
        return toolCall(session, event);
      case 'api-retry':
        session.pending.push({
          name: 'api-retry',
          at: event.at,
          attributes: {
            attempt: event.attempt,
            delay_ms: event.delayMs,
            // eslint-disable-next-line no-restricted-syntax -- OpenTelemetry exports an undefined attribute
            ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
          },
        });
        return;
      case 'model-fallback':
        session.span.setAttributes({
          [BATON.fallbackFrom]: event.from,
          [BATON.fallbackTo]: event.to,
        });
        session.pending.push({
          name: 'model-fallback',
          at: event.at,
          attributes: {
            [BATON.fallbackFrom]: event.from,
            [BATON.fallbackTo]: event.to,
            // eslint-disable-next-line no-restricted-syntax -- OpenTelemetry exports an undefined attribute
            ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
          },
        });
        return;
      case 'session-end':
        return end(event.sessionId, event.at, event.result);
      default:
        return;
    }
  };

  return {
    record(event) {
      try {
        record(event);
      } catch {
        // Tracing is an observer: a span that cannot be built never costs the session anything.
      }
    },
    endAll() {
      for (const sessionId of [...open.keys()]) end(sessionId, Date.now());
    },
  };
}
