/**
 * What an operator does to a project while it runs: cancel it, pause it and send it guidance.
 * The control API (`cancel`, `pause`, `say`), the `--local` verbs and the worker read these rules
 * from here.
 */

import { randomUUID } from 'node:crypto';
import type { GuidanceSource, OperatorGuidance } from '@baton/session';
import { ProjectError } from './errors.js';
import type { BatonKeys } from './keys.js';
import type { RedisClient } from '@baton/storage-redis';
import { writeBatch, type ProjectFence } from './internal/write-batch.js';
import { OPERATOR_PAUSE_REASON } from './chaining.js';
import type { CancelResult, PauseResult } from './control/control-api.js';
import { PROJECT_TRANSITIONS, type ProjectRecord, type ProjectStatus } from './project.js';
import type { ProjectLog } from './project-log.js';

/** Longest guidance text `say` accepts (characters, after trimming). */
export const GUIDANCE_MAX_CHARACTERS = 4_000;

/** Guidance messages kept per project (the oldest go first). */
export const GUIDANCE_KEPT = 200;

/** Validates a guidance text; throws `invalid_input` naming what is wrong. */
export function parseGuidanceText(text: unknown): string {
  if (typeof text !== 'string') throw new ProjectError('invalid_input', 'guidance must be text');
  const trimmed = text.trim();
  if (trimmed === '') throw new ProjectError('invalid_input', 'guidance must not be empty');
  if (trimmed.length > GUIDANCE_MAX_CHARACTERS) {
    throw new ProjectError(
      'invalid_input',
      `guidance is ${trimmed.length} characters; at most ${GUIDANCE_MAX_CHARACTERS} are allowed`,
    );
  }
  return trimmed;
}

/** One stored guidance message, with who acknowledged it. */
export interface StoredGuidance extends OperatorGuidance {
  acknowledged: { sessionId: string; turn: number; at: number } | null;
}

/** A project's guidance: what `say` adds and a session reads and acknowledges. */
export interface ProjectGuidance extends GuidanceSource {
  /** Stores a validated text; returns the new message. */
  add(text: string): Promise<OperatorGuidance>;
  /** Every kept message (at most `GUIDANCE_KEPT`), oldest first. */
  list(): Promise<StoredGuidance[]>;
}

/** A new guidance message: its id and time, the text already checked by `parseGuidanceText`. */
export function newGuidance(text: string): OperatorGuidance {
  return { id: `g-${randomUUID()}`, at: Date.now(), text };
}

/** The messages of `list` no session has acknowledged yet, oldest first. */
export async function pendingGuidance(
  list: () => Promise<StoredGuidance[]>,
): Promise<OperatorGuidance[]> {
  return (await list())
    .filter((entry) => entry.acknowledged === null)
    .map(({ id, at, text }) => ({ id, at, text }));
}

/** A project's guidance in Redis: a capped list of messages and a hash of acknowledgements. */
export function createRedisGuidance(options: {
  redis: RedisClient;
  keys: BatonKeys;
  projectId: string;
  /**
   * The acknowledging session's lease (a worker's sessions): an acknowledgement is stored only
   * while the lease holds this token, so a session that lost the project cannot mark guidance
   * as seen that its replacement never got (`ProjectError('fenced')`). Default: unfenced.
   */
  fence?: ProjectFence | undefined;
}): ProjectGuidance {
  const { redis, keys, projectId, fence } = options;
  const listKey = keys.guidance(projectId);
  const acksKey = keys.guidanceAcks(projectId);
  async function list(): Promise<StoredGuidance[]> {
    const [entries, acks] = await Promise.all([
      redis.lrange(listKey, 0, -1),
      redis.hgetall(acksKey),
    ]);
    return entries.map((raw) => {
      const entry = JSON.parse(raw) as OperatorGuidance;
      const ack = acks[entry.id];
      return {
        ...entry,
        acknowledged:
          ack === undefined ? null : (JSON.parse(ack) as StoredGuidance['acknowledged']),
      };
    });
  }
  return {
    async add(text) {
      const entry = newGuidance(text);
      const pipeline = redis.pipeline();
      pipeline.rpush(listKey, JSON.stringify(entry));
      pipeline.ltrim(listKey, -GUIDANCE_KEPT, -1);
      const replies = (await pipeline.exec()) ?? [];
      for (const [error] of replies) if (error) throw error;
      return entry;
    },
    list,
    pending: () => pendingGuidance(list),
    async acknowledge(ids, by) {
      if (ids.length === 0) return;
      const value = JSON.stringify({ sessionId: by.sessionId, turn: by.turn, at: Date.now() });
      const writes = writeBatch(redis, keys, projectId, fence);
      writes.hset(acksKey, ...ids.flatMap((id) => [id, value]));
      await writes.exec();
    },
  };
}

/**
 * An operator's pause, the one rule of the control API's `pause` (a worker's project on Redis)
 * and `baton pause --local` (a `baton run` project): an already paused project is left as it is
 * (`changed: false`); a queued or running one moves to `paused` (`OPERATOR_PAUSE_REASON`), any
 * other status is a `conflict`; then the `project-paused` event names the running session, if
 * any. `project` is the record the caller read (its own not-found error). `stop` is what only
 * one side does between the move and the event (Redis: tell the workers, drop the queued job):
 * it gets the status the project moved from and the paused record, and returns the removed
 * job's id. The running session sees the status at its next look and pauses itself.
 */
export async function operatorPause(
  log: Pick<ProjectLog, 'require' | 'transition' | 'appendEvent'>,
  project: ProjectRecord,
  stop?: (from: ProjectStatus, paused: ProjectRecord) => Promise<string | null>,
): Promise<PauseResult> {
  const projectId = project.id;
  if (project.status === 'paused') {
    return { project, removedJobId: null, runningSessionId: null, changed: false };
  }
  const moved = await log.transition(projectId, PROJECT_TRANSITIONS.pause.to, {
    from: PROJECT_TRANSITIONS.pause.from,
    reason: OPERATOR_PAUSE_REASON,
  });
  if (!moved.ok) {
    throw new ProjectError(
      'conflict',
      `project ${projectId} is ${moved.current ?? 'gone'}; only a queued or running project can be paused`,
    );
  }
  const current = await log.require(projectId);
  const runningSessionId = current.activeSession?.sessionId ?? null;
  const removedJobId = stop === undefined ? null : await stop(moved.from, current);
  await log.appendEvent(projectId, {
    v: 1,
    type: 'project-paused',
    at: Date.now(),
    projectId,
    by: 'operator',
    runningSessionId,
    removedJobId,
  });
  return { project: current, removedJobId, runningSessionId, changed: true };
}

/** The status reason of a user's cancel (`baton cancel`, the dashboard, `baton cancel --local`). */
const CANCEL_REASON = 'cancelled by user';

/**
 * A user's cancel, the one rule of the control API's `cancel` (a worker's project on Redis) and
 * `baton cancel --local` (a `baton run` project): a completed project is a `conflict`; an already
 * cancelled one is left as it is; a queued, running, paused or failed one moves to `cancelled`
 * (reason `cancelled by user`), and a move another process won meanwhile is a `conflict` naming
 * the status it found. `project` is the record the caller read (its own not-found error). `stop`
 * is what only one side does afterwards, also for an already cancelled project (Redis: tell the
 * workers, drop the queued job); it returns the removed job's id. The running session sees the
 * status at its next look and aborts.
 */
export async function operatorCancel(
  log: Pick<ProjectLog, 'require' | 'transition'>,
  project: ProjectRecord,
  stop?: (cancelled: ProjectRecord) => Promise<string | null>,
): Promise<CancelResult> {
  const projectId = project.id;
  if (project.status === 'completed') {
    throw new ProjectError('conflict', `project ${projectId} is already completed`);
  }
  if (project.status !== 'cancelled') {
    const moved = await log.transition(projectId, PROJECT_TRANSITIONS.cancel.to, {
      from: PROJECT_TRANSITIONS.cancel.from,
      reason: CANCEL_REASON,
    });
    if (!moved.ok && moved.current !== 'cancelled') {
      throw new ProjectError('conflict', `project ${projectId} is ${moved.current ?? 'gone'}`);
    }
  }
  const removedJobId = stop === undefined ? null : await stop(project);
  return { project: await log.require(projectId), removedJobId };
}
