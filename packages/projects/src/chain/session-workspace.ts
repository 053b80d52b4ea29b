import type { MemoryStore } from '@baton/core';
import type { SessionResult } from '@baton/session';
import {
  WorkspaceError,
  type PreparedWorkspace,
  type ProjectWorkspace,
  type WorkspaceErrorCode,
} from '@baton/workspace';
import type { ActiveSessionInfo } from '../project.js';
import { CHECKPOINT_FAILED_REASON } from '../chaining.js';
import type { ChainLogger } from './chain-logger.js';

/** What preparing the workspace gave: a workspace ready at the last checkpoint, or why not. */
export type PrepareOutcome =
  | { ok: true; workspace: PreparedWorkspace }
  /**
   * `pause`: the project waits for a user (the remote cannot be reached, or the workspace holds
   * files Baton may not write over); else the session fails.
   */
  | { ok: false; error: string; pause?: string };

/** Preparation failures no retry can fix: the project pauses until a user acts. */
const USER_MUST_ACT: ReadonlySet<WorkspaceErrorCode> = new Set([
  'repo_unreachable',
  'workspace_not_empty',
  'workspace_taken',
]);

/**
 * Brings this worker's clone to the branch's last checkpoint. Commits an earlier session on this
 * worker could not push are pushed first: a session never starts on work the remote lacks.
 */
export async function prepareWorkspace(
  workspace: ProjectWorkspace,
  lastCheckpoint: string | null,
): Promise<PrepareOutcome> {
  let prepared: PreparedWorkspace;
  try {
    prepared = await workspace.prepare(lastCheckpoint);
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    const message = `the workspace could not be prepared: ${error.message}`;
    return USER_MUST_ACT.has(error.code)
      ? { ok: false, error: message, pause: message }
      : { ok: false, error: message };
  }
  if (prepared.recovered) {
    const pushed = await workspace.checkpoint({
      subject: 'baton: checkpoint of an earlier session',
      final: true,
    });
    if (!pushed.pushed) {
      const message = `${CHECKPOINT_FAILED_REASON}: checkpoint ${(pushed.head ?? '').slice(0, 12)} of an earlier session was not pushed: ${pushed.pushError?.message ?? 'unknown reason'}`;
      return pushed.pushError?.code === 'push_rejected'
        ? { ok: false, error: message }
        : { ok: false, error: message, pause: message };
    }
  }
  return { ok: true, workspace: prepared };
}

/**
 * Why the session's last checkpoint is not on the remote, as the reason the project pauses with
 * (`checkpoint_failed: ...`), or `undefined` when it is there. A rejection as not a fast-forward
 * fails the session instead.
 */
export function unpushedCheckpoint(result: SessionResult): string | undefined {
  if (result.checkpointError !== undefined) {
    return `${CHECKPOINT_FAILED_REASON}: the last checkpoint could not be saved: ${result.checkpointError}`;
  }
  const checkpoint = result.checkpoint;
  if (checkpoint === undefined || checkpoint.pushed || checkpoint.head === null) return undefined;
  if (checkpoint.pushError?.code === 'push_rejected') return undefined;
  return `${CHECKPOINT_FAILED_REASON}: checkpoint ${checkpoint.head.slice(0, 12)} was not pushed: ${checkpoint.pushError?.message ?? 'unknown reason'}`;
}

/**
 * Notes a crash in the progress log, so the next agent (and a human reading memory) knows the
 * previous session stopped without its end-of-session entry, and which checkpoint of the branch
 * the workspace now holds (work after it was lost with the crashed worker).
 */
export async function recordInterruption(
  store: MemoryStore,
  previous: ActiveSessionInfo,
  next: {
    sessionNumber: number;
    sessionId: string;
    branch: string;
    checkpoint: string | null;
    log: ChainLogger;
  },
): Promise<void> {
  const from =
    next.checkpoint === null
      ? `The workspace starts from the base of ${next.branch} (no checkpoint was pushed).`
      : `The workspace starts from checkpoint ${next.checkpoint.slice(0, 12)} of ${next.branch}; changes after it were lost.`;
  const note =
    `\n## Session ${previous.sessionNumber} interrupted\n` +
    `- It started at ${new Date(previous.startedAt).toISOString()} and never finished ` +
    `(its worker stopped). Session ${next.sessionNumber} resumes the work.\n` +
    `- ${from}\n`;
  try {
    await store.edit('progress.md', (current) => `${current.replace(/\n*$/, '\n')}${note}`, {
      command: 'insert',
      session: next.sessionId,
    });
  } catch (error) {
    // No progress log yet (the crash hit the init session): the new session writes one.
    next.log.debug({ err: error }, 'could not note the interruption in progress.md');
  }
}
