import type { ProjectEvent } from './event-decoder.js';
import type { ProjectStatus } from './project.js';
import type { WebhookEventType } from './webhooks/payload.js';

/**
 * Events the worker itself publishes to a project's stream, next to the session's own events
 * (`SessionEvent` from `@baton/session`: session-start, turn, tool-call, memory-change, api-retry,
 * session-end). Every event is JSON, versioned with `v`, and carries `type`, `at`, `projectId`.
 */
/** Fields every worker event carries. */
interface WorkerEventBase {
  v: 1;
  at: number;
  projectId: string;
}

/** Fields of the events about one session run by one worker. */
interface SessionRunEventBase extends WorkerEventBase {
  sessionId: string;
  sessionNumber: number;
  jobId: string;
  workerId: string;
}

export type WorkerEvent =
  | (WorkerEventBase & {
      type: 'project-status';
      from: ProjectStatus | null;
      to: ProjectStatus;
      reason: string | null;
      /** The move was a pause because a project budget was used up. */
      budgetReached?: true;
    })
  | (WorkerEventBase & {
      type: 'session-queued';
      sessionNumber: number;
      jobId: string;
      delayMs: number;
      reason: string;
    })
  /** A worker found the previous session of this project started but never ended (crash). */
  | (SessionRunEventBase & { type: 'session-interrupted' })
  /** The worker holds the project's lease and is about to run a session. */
  | (SessionRunEventBase & { type: 'session-claimed'; interrupted: boolean })
  /**
   * An operator paused the project (distinct from a budget pause and from a cancel): the queued
   * session was removed, or the running one was told to close its log and stop.
   */
  | (WorkerEventBase & {
      type: 'project-paused';
      by: 'operator';
      /** The session that was running and gets its end-of-session turn, if any. */
      runningSessionId: string | null;
      /** The queued job that was removed, if any. */
      removedJobId: string | null;
    })
  /** An operator sent guidance (`baton say`); the session reports `guidance-delivered`. */
  | (WorkerEventBase & {
      type: 'guidance-sent';
      guidanceId: string;
      text: string;
      /** The session running when it was sent (it gets it at its next model turn), if any. */
      runningSessionId: string | null;
    })
  /**
   * The worker brought its own clone of the project to the branch's last checkpoint before the
   * session (`head`; `null` for a branch with no commit yet). `recovered`: the clone held
   * commits of an earlier session on this worker that the remote did not have yet.
   */
  | (SessionRunEventBase & {
      type: 'workspace-prepared';
      branch: string;
      head: string | null;
      remoteHead: string | null;
      recovered: boolean;
    })
  /**
   * After a pushed checkpoint the project's memory went (or failed to go) to
   * `refs/baton/memory/<id>` (docs/workspaces.md, "Memory snapshots"). `withheld`: memory files the
   * secret scan or the path rules kept out, by path and reason only; then it is logged at `warn`.
   */
  | (SessionRunEventBase & {
      type: 'memory-snapshot';
      commit: string | null;
      pushed: boolean;
      withheld: Array<{ path: string; reason: string }>;
      error?: string | undefined;
    })
  /** The session finished and its summary was stored. */
  | (SessionRunEventBase & { type: 'session-released'; outcome: string })
  /** A webhook delivery succeeded, or failed for good after its last attempt. */
  | (WorkerEventBase & {
      type: 'webhook-delivery';
      notificationId: string;
      webhookType: WebhookEventType;
      /** The receiver's origin (paths of webhook URLs often hold secrets). */
      target: string;
      ok: boolean;
      attempts: number;
      status?: number | undefined;
      error?: string | undefined;
    });

/**
 * What `appendEvent` writes: any JSON event with these fields (the session's events and
 * `WorkerEvent`s). Readers get it back decoded (`ProjectEvent`, see `decodeProjectEvent`).
 */
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
  /** The entry decoded; an unreadable one is an `UnknownProjectEvent` saying why. */
  event: ProjectEvent;
}
