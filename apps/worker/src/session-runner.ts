import type { RunSessionOptions, SessionEvent, SessionResult } from '@baton/session';

/** Options the worker passes to a session runner: `@baton/session`'s own. */
export type WorkerRunSessionOptions = RunSessionOptions;

/** A session event as published to a project's stream. */
export type WorkerSessionEvent = SessionEvent;

/** A session's result. */
export type WorkerSessionResult = SessionResult;

/**
 * Runs one session. The processor takes any function of this shape (tests and benchmarks inject
 * their own); the worker's default is `runSession` from `@baton/session`.
 */
export type SessionRunner = (options: RunSessionOptions) => Promise<SessionResult>;
