import { defineContextConfig } from '@baton/context-config';
import type { RunSessionOptions, SessionEvent } from '@baton/session';
import type { ProjectBudgets } from '../project.js';
import type {
  ChainedSessionRequest,
  ChainEvent,
  Claim,
  SessionChainOptions,
  Setup,
} from './chain-types.js';
import { withMemorySnapshots } from './memory-snapshots.js';
import { fallbackModelOption, sessionBudgets } from './session-results.js';

/** What one session's options are made of besides the claim and the setup. */
export interface SessionOptionsInput {
  options: SessionChainOptions;
  request: ChainedSessionRequest;
  sessionId: string;
  /** The budgets the rules check: the project's stored ones (`baton run` and workers alike). */
  budgets: ProjectBudgets;
  /** Appends a session event to the project's log (observers see it first). */
  publish: (event: ChainEvent) => Promise<void>;
}

/**
 * The `runSession` options of one claimed, prepared session: the request's extra options laid
 * under what the chain decides (model, project, memory, workspace, checkpoints, budgets, signals,
 * verification carried between sessions, events).
 */
export function chainSessionOptions(
  { project, previous, extraOptions }: Claim,
  { store, workspace, kind, checks }: Setup,
  { options, request, sessionId, budgets, publish }: SessionOptionsInput,
): RunSessionOptions {
  const { control } = request;
  const verification = extraOptions.verification;
  return {
    context: defineContextConfig(project.context),
    // Memory stores are created with the tool's limits and enforce them atomically.
    memoryQuotaEnforcement: 'store',
    ...extraOptions,
    model: project.model ?? options.defaultModel,
    ...fallbackModelOption(project, options.defaultFallbackModel),
    project: { id: project.id, goal: project.goal },
    // The project's own MCP servers over the worker's (and the repository's .mcp.json).
    mcp: { ...extraOptions.mcp, project: project.mcp },
    client: options.client,
    kind,
    store,
    workspace: workspace.dir,
    checkpoints: {
      target: withMemorySnapshots(workspace, store, project, {
        on: options.memorySnapshots !== false,
        request,
        sessionId,
        workerId: options.workerId,
        publish,
        log: options.logger,
      }),
      intervalMs: options.checkpointIntervalMs,
    },
    budgets: sessionBudgets({ ...project, budgets }),
    signal: control.signal,
    pauseSignal: control.pauseSignal,
    sessionId,
    sessionNumber: request.sessionNumber,
    interrupted: previous !== null,
    // Shown in the resume orientation: which commit the branch was last saved at.
    lastCheckpoint: project.lastCheckpoint,
    // Carried between sessions, so a session re-runs only the checks not yet verified on its
    // final commit (least recently verified first), not every passing check.
    verification:
      verification === false
        ? false
        : {
            defaultCheck: project.verification?.check,
            requireChecks: project.verification?.requireChecks,
            checkTimeoutMs: secondsToMs(project.verification?.checkTimeoutSeconds),
            regressionBudgetMs: secondsToMs(project.verification?.regressionBudgetSeconds),
            ...verification,
            previous: checks,
          },
    onEvent: (event: SessionEvent) => {
      options.observeSessionEvent?.(event);
      return publish(event);
    },
  };
}

/** A project's verification seconds as the session's milliseconds (`undefined`: the default). */
function secondsToMs(seconds: number | undefined): number | undefined {
  return seconds === undefined ? undefined : seconds * 1_000;
}
