import { redactValue } from '@baton/core';
import type { SessionEvent } from '../types.js';

/** Distributive Omit, so each event variant keeps its own fields. */
type WithoutBase<T> = T extends unknown ? Omit<T, 'v' | 'at' | 'projectId' | 'sessionId'> : never;

/** The part of an event the emitter fills in. */
export type EventBody = WithoutBase<SessionEvent>;

/**
 * Sends events to `onEvent`; a sink that throws or rejects never affects the session. Events leave
 * the session (Redis streams, the dashboard, webhooks, logs), so every string in one is redacted
 * with `@baton/core`'s secret rules first: a tool call's summary or an error can quote a token.
 */
export function createEmitter(
  onEvent: ((event: SessionEvent) => void | Promise<void>) | undefined,
  base: { projectId: string; sessionId: string },
): (body: EventBody) => Promise<void> {
  return async (body) => {
    if (onEvent === undefined) return;
    const event = {
      v: 1,
      at: Date.now(),
      projectId: base.projectId,
      sessionId: base.sessionId,
      ...redactValue(body),
    } as SessionEvent;
    try {
      await onEvent(event);
    } catch {
      // The session outlives a broken sink (a dashboard or log that failed must not stop the work).
    }
  };
}
