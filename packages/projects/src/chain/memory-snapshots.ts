import type { MemoryStore } from '@baton/core';
import type { SessionCheckpoints } from '@baton/session';
import {
  MemorySnapshotWriter,
  collectMemoryFiles,
  type MemorySnapshotResult,
  type ProjectWorkspace,
} from '@baton/workspace';
import type { WorkerEvent } from '../events.js';
import type { ProjectRecord } from '../project.js';
import { bindChainLogger, SILENT_CHAIN_LOGGER, type ChainLogger } from './chain-logger.js';

/** Who takes the session's memory snapshots and where they are told. */
export interface MemorySnapshotsOptions {
  /** `BATON_MEMORY_SNAPSHOTS`: false leaves the workspace as it is. */
  on: boolean;
  request: {
    projectId: string;
    sessionNumber: number;
    jobId: string;
    /** The lease's fencing token (unset: `baton run`, no lease). */
    fence?: number | undefined;
    /** Asked before every push, as for the checkpoint branch. */
    mayPush?: (() => Promise<string | undefined>) | undefined;
  };
  sessionId: string;
  workerId: string;
  /** Appends the `memory-snapshot` event; never throws. */
  publish: (event: WorkerEvent) => Promise<void>;
  /** Default: logs nothing. */
  log?: ChainLogger | undefined;
}

/**
 * The session's checkpoint target with memory snapshots (docs/workspaces.md, "Memory
 * snapshots"): after every checkpoint whose push landed, the project's memory and goal go to
 * `refs/baton/memory/<id>` of the same remote. A snapshot that fails is reported (a
 * `memory-snapshot` event with `error`, a `warn` line) and never fails the checkpoint: the branch
 * is the user's work, the snapshot only lets `baton adopt` resume with memory.
 */
export function withMemorySnapshots(
  workspace: ProjectWorkspace,
  store: MemoryStore,
  project: ProjectRecord,
  options: MemorySnapshotsOptions,
): SessionCheckpoints['target'] {
  if (!options.on) return workspace;
  const { request } = options;
  const log = bindChainLogger(options.log ?? SILENT_CHAIN_LOGGER, {
    projectId: request.projectId,
    jobId: request.jobId,
    sessionNumber: request.sessionNumber,
  });
  const writer = new MemorySnapshotWriter({
    gitDir: workspace.gitDir,
    projectId: request.projectId,
    mayPush: request.mayPush,
  });
  const snapshot = async (): Promise<MemorySnapshotResult> => {
    try {
      return await writer.write({
        files: await collectMemoryFiles(store),
        goal: project.goal,
        sessionNumber: request.sessionNumber,
        fenceToken: request.fence ?? null,
      });
    } catch (error) {
      // The store could not be read (Redis down, fenced out): no snapshot this time.
      const message = error instanceof Error ? error.message : String(error);
      return { commit: null, pushed: false, unchanged: false, withheld: [], error: message };
    }
  };
  // A remote that refuses refs/baton/memory/* refuses it at every checkpoint: said once per
  // session (event and warn line), then quiet until a snapshot lands again.
  let failing = false;
  return {
    gitDir: workspace.gitDir,
    async checkpoint(checkpointRequest) {
      const checkpoint = await workspace.checkpoint(checkpointRequest);
      if (!checkpoint.pushed) return checkpoint;
      const result = await snapshot();
      if (result.unchanged) return checkpoint;
      if (result.error !== undefined) {
        if (failing) return checkpoint;
        failing = true;
        log.warn(
          { err: result.error },
          'memory snapshot not saved (not said again in this session until one is)',
        );
      } else if (result.pushed) {
        failing = false;
      }
      if (result.error === undefined && result.withheld.length > 0) {
        log.warn(
          { withheld: result.withheld, commit: result.commit },
          'memory snapshot saved without the memory files the secret scan or the path rules withheld',
        );
      }
      await options.publish({
        v: 1,
        type: 'memory-snapshot',
        at: Date.now(),
        projectId: request.projectId,
        sessionId: options.sessionId,
        sessionNumber: request.sessionNumber,
        jobId: request.jobId,
        workerId: options.workerId,
        commit: result.commit,
        pushed: result.pushed,
        withheld: result.withheld,
        error: result.error,
      });
      return checkpoint;
    },
  };
}
