import type { ProjectStatus } from './project.js';

/**
 * Events the worker itself publishes to a project's stream, next to the session's own events
 * (`SessionEvent` from `@baton/session`: session-start, turn, tool-call, memory-change, api-retry,
 * session-end). Every event is JSON, versioned with `v`, and carries `type`, `at`, `projectId`.
 */
export type WorkerEvent =
  | {
      v: 1;
      type: 'project-status';
      at: number;
      projectId: string;
      from: ProjectStatus | null;
      to: ProjectStatus;
      reason: string | null;
    }
  | {
      v: 1;
      type: 'session-queued';
      at: number;
      projectId: string;
      sessionNumber: number;
      jobId: string;
      delayMs: number;
      reason: string;
    }
  | {
      /** A worker found the previous session of this project started but never ended (crash). */
      v: 1;
      type: 'session-interrupted';
      at: number;
      projectId: string;
      sessionId: string;
      sessionNumber: number;
      jobId: string;
      workerId: string;
    }
  | {
      /** The worker holds the project's lease and is about to run a session. */
      v: 1;
      type: 'session-claimed';
      at: number;
      projectId: string;
      sessionId: string;
      sessionNumber: number;
      jobId: string;
      workerId: string;
      interrupted: boolean;
    }
  | {
      /** The session finished and its summary was stored. */
      v: 1;
      type: 'session-released';
      at: number;
      projectId: string;
      sessionId: string;
      sessionNumber: number;
      jobId: string;
      workerId: string;
      outcome: string;
    };

/** Any event on a project stream. Session events are kept as the session emitted them. */
export interface StreamEvent {
  v: number;
  type: string;
  at: number;
  projectId: string;
  [field: string]: unknown;
}

/** One entry read back from a project's stream. */
export interface EventEntry {
  /** Redis stream id (`<ms>-<seq>`), usable as `fromId` to continue after it. */
  id: string;
  event: StreamEvent;
}
