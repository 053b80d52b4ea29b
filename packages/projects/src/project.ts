import path from 'node:path';
import { z } from 'zod';
import {
  CONTEXT_PRESET_NAMES,
  ContextConfigError,
  type ContextConfigInput,
  type ContextPresetName,
  defineContextConfig,
} from '@baton/context-config';
import {
  type ProjectSandbox,
  type SandboxDescription,
  projectSandboxSchema,
} from '@baton/workspace/policy';
import { type McpConfig, mcpConfigSchema } from '@baton/session/mcp-config';
import { ProjectError } from './errors.js';

/** Where a project stands. */
export type ProjectStatus = 'queued' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export const PROJECT_STATUSES: readonly ProjectStatus[] = [
  'queued',
  'running',
  'paused',
  'completed',
  'failed',
  'cancelled',
];

/** A project's context-management preset: one of `@baton/context-config`'s `CONTEXT_PRESET_NAMES`. */
export type ProjectContextPreset = ContextPresetName;

/** The statuses from which a worker may run (or keep running) a session. */
export const RUNNABLE_STATUSES = ['queued', 'running'] as const satisfies readonly ProjectStatus[];

/**
 * Every status change the system makes, with the statuses it may start from. The Lua transition
 * checks `from` atomically, so a cancel and a finishing session never both win.
 */
export const PROJECT_TRANSITIONS = {
  /** A worker claims the project to run a session. */
  claim: { to: 'running', from: RUNNABLE_STATUSES },
  /** A session ended and another one is queued. */
  chain: { to: 'queued', from: RUNNABLE_STATUSES },
  /** A session ended and the chaining policy settled the project (completed, paused, failed). */
  finish: { from: RUNNABLE_STATUSES },
  /** A user continues a stopped project (or re-queues a stuck queued one). */
  resume: { to: 'queued', from: ['paused', 'cancelled', 'failed', 'queued'] },
  /**
   * An operator pauses the project: a queued one loses its queued session, a running one stops
   * after its end-of-session turn. Budget pauses use `finish`; the reason tells them apart.
   */
  pause: { to: 'paused', from: ['queued', 'running'] },
  /** A user cancels the project. */
  cancel: { to: 'cancelled', from: ['queued', 'running', 'paused', 'failed'] },
} as const satisfies Record<string, { to?: ProjectStatus; from: readonly ProjectStatus[] }>;

/** Project ids end up in Redis keys, BullMQ job ids and memory namespaces: keep them plain. */
export const PROJECT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

/** What a bad project id is told, wherever it was typed (CLI argument, HTTP request, API call). */
export const PROJECT_ID_RULE =
  'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit';

/** True for an id `PROJECT_ID_PATTERN` accepts. */
export function isValidProjectId(value: unknown): value is string {
  return typeof value === 'string' && PROJECT_ID_PATTERN.test(value);
}

/** Throws `invalid_input` naming the value unless it is a valid project id. */
export function checkProjectId(projectId: string): void {
  if (!isValidProjectId(projectId)) {
    throw new ProjectError('invalid_input', `invalid project id ${JSON.stringify(projectId)}`);
  }
}

/** Limits of one session, passed to `runSession` (same shape as `@baton/session`'s `SessionBudgets`). */
export interface SessionBudgetsInput {
  maxTurns?: number;
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxUsd?: number;
  wallClockMs?: number;
}

/** Limits of a whole project, checked between sessions. Exhausting one pauses the project. */
export interface ProjectBudgets {
  /** Total spend in USD over every session. */
  maxUsd?: number | undefined;
  /** Number of sessions (init included). */
  maxSessions?: number | undefined;
  /** Input + output tokens over every session. */
  maxTokens?: number | undefined;
  /**
   * Resume sessions in a row that may end without a newly passing feature; the next one pauses
   * the project with reason `no_progress`. Default `DEFAULT_MAX_SESSIONS_WITHOUT_PROGRESS` (3).
   */
  maxSessionsWithoutProgress?: number | undefined;
  /** Limits applied to each session. */
  session?: SessionBudgetsInput | undefined;
}

/** What a user supplies to create a project. */
export interface ProjectInput {
  id: string;
  goal: string;
  /**
   * Absolute directory of the working tree on every worker machine (each worker keeps its own
   * clone there); default `<BATON_HOME>/workspaces/<id>` of each worker.
   */
  workspace?: string;
  /**
   * `workspace` may already hold files, which become the first checkpoint (secrets and files over
   * the size limit stay uncommitted; nothing is deleted). Default false: such a directory is refused.
   */
  adoptWorkspace?: boolean;
  /**
   * The repository the work starts from and is pushed to: a path or a URL git can fetch. Default:
   * none, a bare repository Baton owns under the worker's `BATON_HOME`.
   */
  repo?: string;
  /** The branch the work starts from (needs `repo`). Default: the repository's current or default branch. */
  base?: string;
  /** Commit checkpoints without running the repository's commit hooks. Default false. */
  skipHooks?: boolean;
  /** Model id; default the worker's `BATON_MODEL`. */
  model?: string;
  /**
   * Model a session continues on when its model stays overloaded after the retries; default the
   * worker's `BATON_FALLBACK_MODEL` (none when that is unset).
   */
  fallbackModel?: string;
  budgets?: ProjectBudgets;
  /**
   * The context-management preset, the highest layer over `context`; shorthand for
   * `context.preset`.
   */
  contextPreset?: ProjectContextPreset;
  /**
   * Context management of every session (`@baton/context-config`'s `ContextConfigInput`), laid
   * over `baton.config.json` and `BATON_CONTEXT_*` where the project is created; the merged result
   * is stored with the project. Default: those layers alone (preset `coding` when none is set).
   */
  context?: ContextConfigInput;
  /**
   * What this project's commands may reach beyond the worker's sandbox policy: network hosts
   * (through the filtering proxy), read-only paths, lower limits. Default: the worker's policy.
   */
  sandbox?: ProjectSandbox;
  /**
   * How flips to `passes: true` are verified: `check`, the check of features that have none,
   * and `requireChecks`. Default: each feature's own check; a flip without one is claimed.
   */
  verification?: ProjectVerification;
  /**
   * MCP servers of every session (`.mcp.json`'s format, `@baton/session`'s `mcpConfigSchema`;
   * secrets only as `${VAR}` references, resolved from the worker's environment). Default none
   * besides the repository's `.mcp.json` and the worker's file.
   */
  mcp?: McpConfig;
}

/**
 * Where a project's code comes from and goes to, resolved and checked once at creation
 * (`resolveProjectSource` of `@baton/workspace`). No credentials: a URL with them is refused.
 */
export interface ProjectSourceFields {
  /** The repository (an absolute path or a URL), or `null`: a bare repository Baton owns under `BATON_HOME`. */
  repo: string | null;
  /** The base branch, or `null` for a project that starts from nothing. */
  base: string | null;
  /** The commit the base pointed at when the project was created. */
  baseCommit: string | null;
  /** `baton/<project-id>`. */
  branch: string;
  skipHooks: boolean;
}

/** The counters a project accumulates over its sessions. */
export interface ProjectCounters {
  /** Sessions that ended (any outcome). */
  sessions: number;
  /** Highest session number that started (a crashed session started but did not end). */
  sessionsStarted: number;
  featuresPassing: number;
  featuresTotal: number;
  /** Passing features whose last check passed (verified progress), after the latest session. */
  featuresVerified: number;
  /** Passing features accepted without a check, after the latest session. */
  featuresClaimed: number;
  /** Failing features Baton flipped back because their check failed on a re-run. */
  featuresRegressed: number;
  /** Uncached input tokens (the API's `input_tokens`). */
  inputTokens: number;
  /** Input tokens read from the prompt cache. */
  cacheReadInputTokens: number;
  /** Input tokens written to the prompt cache. */
  cacheCreationInputTokens: number;
  outputTokens: number;
  clearedInputTokens: number;
  costUsd: number;
  /** Failed sessions in a row; reset by any session that did not fail. */
  consecutiveFailures: number;
  /** Resume sessions in a row that ended without a newly passing feature; reset by one that flipped one, and by a user's resume. */
  sessionsWithoutProgress: number;
  /**
   * Sessions in a row whose context window filled before they did anything useful (no feature
   * flipped, no workspace change saved); reset by any other session that ran, and by a user's
   * resume. Two pause the project (`context_full`).
   */
  uselessContextFills: number;
  /** Sessions that were interrupted (crash) and resumed. */
  interruptions: number;
}

/** The session currently holding the project (cleared when it ends; left behind by a crash). */
export interface ActiveSessionInfo {
  sessionId: string;
  sessionNumber: number;
  jobId: string;
  workerId: string;
  startedAt: number;
}

/** One project as stored in Redis. */
export interface ProjectRecord extends ProjectSourceFields {
  id: string;
  goal: string;
  /** The working tree on each worker, or `null`: `<BATON_HOME>/workspaces/<id>` of each worker. */
  workspace: string | null;
  /**
   * The user said at creation that `workspace`'s own files may become the first checkpoint
   * (`--adopt`). Every machine that prepares the workspace checks it again before writing there.
   */
  adoptWorkspace: boolean;
  /** Model id, or `null` for the worker's default. */
  model: string | null;
  /** Fallback model id, or `null` for the worker's `BATON_FALLBACK_MODEL`. */
  fallbackModel: string | null;
  budgets: ProjectBudgets;
  /** The preset `context` starts from (`context.preset`). */
  contextPreset: ProjectContextPreset;
  /**
   * The context config every session of the project resolves (`defineContextConfig`): what
   * `baton.config.json`, `BATON_CONTEXT_*` and the creation request said where the project was
   * created, merged. Workers use it as stored; their own `BATON_CONTEXT_*` do not change it.
   */
  context: ContextConfigInput;
  /** The project's sandbox settings, `null` for the worker's policy as it is. */
  sandbox: ProjectSandbox | null;
  /** How flips are verified (`--check`, `--require-checks`), `null` for the defaults. */
  verification: ProjectVerification | null;
  /** The project's MCP servers (`${VAR}` references unresolved); absent for none. */
  mcp?: McpConfig | undefined;
  /** Where the latest session's commands ran (set when a session starts), `null` before any. */
  sessionSandbox: SandboxDescription | null;
  createdAt: number;
  status: ProjectStatus;
  statusReason: string | null;
  statusAt: number;
  counters: ProjectCounters;
  activeSession: ActiveSessionInfo | null;
  lastError: string | null;
  /**
   * The last checkpoint pushed to the project's remote (a commit id on `branch`): where the next
   * session starts, on any worker. `null` before the first one.
   */
  lastCheckpoint: string | null;
}

/** One timestamped status change. */
export interface StatusTransition {
  at: number;
  from: ProjectStatus | null;
  to: ProjectStatus;
  reason: string | null;
}

/** Model ids as the API names them (`claude-sonnet-4-6`, `sim`, ...): plain characters only. */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9._:@/-]{1,200}$/;

/** What a bad model id is told, wherever it was given (flag, variable, HTTP request). */
export const MODEL_ID_RULE =
  'must be a model id (1-200 letters, digits and . _ : @ / -, e.g. claude-sonnet-4-6)';

/** A model id as a zod schema (trimmed). */
export const modelIdSchema = z.string().trim().regex(MODEL_ID_PATTERN, MODEL_ID_RULE);

/**
 * Checks a model id given by the user (`what` names where, e.g. `BATON_FALLBACK_MODEL`); throws
 * `ProjectError('invalid_input')` with one line naming it.
 */
export function parseModelId(value: string, what: string): string {
  const parsed = modelIdSchema.safeParse(value);
  if (!parsed.success) {
    throw new ProjectError(
      'invalid_input',
      `${what} ${MODEL_ID_RULE}, got ${JSON.stringify(value)}`,
    );
  }
  return parsed.data;
}

/** The id rule as a zod schema, for request validators. */
export const projectIdSchema = z.string().regex(PROJECT_ID_PATTERN, PROJECT_ID_RULE);

// Upper bounds keep a typo (an extra zero run, a pasted timestamp) from meaning "unlimited".
// The messages are whole phrases: the CLI prints them after the flag, the API after the field.
const positiveNumber = z
  .number({ error: 'must be a number' })
  .positive('must be greater than 0')
  .max(1_000_000, 'must be at most 1000000');
const positiveInteger = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .positive('must be greater than 0')
  .max(1_000_000_000, 'must be at most 1000000000');

/** A `ContextConfigInput`, checked by `@baton/context-config` itself (its rules, its messages). */
const contextConfigSchema = z.custom<ContextConfigInput>().superRefine((value, context) => {
  try {
    defineContextConfig(value);
  } catch (error) {
    if (!(error instanceof ContextConfigError)) throw error;
    for (const issue of error.issues) {
      context.addIssue({
        code: 'custom',
        message: issue.message,
        path: issue.path === '' ? [] : issue.path.split('.'),
      });
    }
  }
});

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

/** The limits of one session (`budgets.session`), each with its own rule. */
export const SESSION_BUDGET_RULES = {
  maxTurns: positiveInteger,
  maxInputTokens: positiveInteger,
  maxOutputTokens: positiveInteger,
  maxUsd: positiveNumber,
  wallClockMs: positiveInteger,
} as const satisfies Record<keyof SessionBudgetsInput, z.ZodType<number>>;

/** The project's budgets (`budgets`, without `session`), each with its own rule. */
export const PROJECT_BUDGET_RULES = {
  maxUsd: positiveNumber,
  maxSessions: positiveInteger,
  maxTokens: positiveInteger,
  maxSessionsWithoutProgress: positiveInteger,
} as const satisfies Record<Exclude<keyof ProjectBudgets, 'session'>, z.ZodType<number>>;

const sessionBudgetsSchema = z
  .object({
    maxTurns: SESSION_BUDGET_RULES.maxTurns.optional(),
    maxInputTokens: SESSION_BUDGET_RULES.maxInputTokens.optional(),
    maxOutputTokens: SESSION_BUDGET_RULES.maxOutputTokens.optional(),
    maxUsd: SESSION_BUDGET_RULES.maxUsd.optional(),
    wallClockMs: SESSION_BUDGET_RULES.wallClockMs.optional(),
  })
  .strict();

const budgetsSchema = z
  .object({
    maxUsd: PROJECT_BUDGET_RULES.maxUsd.optional(),
    maxSessions: PROJECT_BUDGET_RULES.maxSessions.optional(),
    maxTokens: PROJECT_BUDGET_RULES.maxTokens.optional(),
    maxSessionsWithoutProgress: PROJECT_BUDGET_RULES.maxSessionsWithoutProgress.optional(),
    session: sessionBudgetsSchema.optional(),
  })
  .strict();

/**
 * A project's verified-progress settings (`@baton/session` verification.ts): the same field in
 * the control API, `baton run`, `baton enqueue` and the dashboard form.
 */
/** `checkTimeoutSeconds` and `regressionBudgetSeconds`: whole seconds, 1 to 3600. */
export const VERIFICATION_SECONDS_RULE = z
  .number()
  .int('must be a whole number of seconds')
  .min(1, 'must be at least 1 second')
  .max(3_600, 'must be at most 3600 seconds');

export const projectVerificationSchema = z.strictObject({
  /**
   * The check of features that have none: a shell command run in the workspace's sandbox with
   * the feature's id in `BATON_FEATURE_ID`. Default: none (such a feature's flip is claimed).
   */
  check: z
    .string()
    .trim()
    .min(1, 'must not be empty')
    .max(4_096, 'is longer than 4096 characters')
    .refine((value) => !CONTROL_CHARACTERS.test(value), 'must be one line')
    .optional(),
  /** Refuse a flip of a feature with no check instead of accepting it as claimed. Default false. */
  requireChecks: z.boolean().optional(),
  /**
   * Wall clock of one check run, in seconds: past it the check is killed and counts as failed.
   * Default 120 (`DEFAULT_CHECK_TIMEOUT_MS`).
   */
  checkTimeoutSeconds: VERIFICATION_SECONDS_RULE.optional(),
  /**
   * Time the end-of-session re-run of passing features' checks may take, in seconds. Default 60
   * (`DEFAULT_REGRESSION_BUDGET_MS`); when every feature passes, every check runs whatever it is.
   */
  regressionBudgetSeconds: VERIFICATION_SECONDS_RULE.optional(),
});

export type ProjectVerification = z.output<typeof projectVerificationSchema>;

export const projectInputSchema = z
  .object({
    id: projectIdSchema,
    goal: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100_000, 'is longer than 100000 characters'),
    workspace: z
      .string()
      .min(1)
      .max(4_096, 'is longer than 4096 characters')
      .refine((value) => path.isAbsolute(value), 'must be an absolute path')
      .refine((value) => !CONTROL_CHARACTERS.test(value), 'contains control characters')
      .optional(),
    repo: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(4_096, 'is longer than 4096 characters')
      .refine((value) => !CONTROL_CHARACTERS.test(value), 'contains control characters')
      .optional(),
    base: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(255, 'is longer than 255 characters')
      .optional(),
    skipHooks: z.boolean().optional(),
    adoptWorkspace: z.boolean().optional(),
    model: modelIdSchema.optional(),
    fallbackModel: modelIdSchema.optional(),
    budgets: budgetsSchema.optional(),
    contextPreset: z.enum(CONTEXT_PRESET_NAMES).optional(),
    context: contextConfigSchema.optional(),
    sandbox: projectSandboxSchema.optional(),
    verification: projectVerificationSchema.optional(),
    mcp: mcpConfigSchema.optional(),
  })
  .strict()
  .refine((input) => input.base === undefined || input.repo !== undefined, {
    message: 'needs repo (a base names a branch of the repository)',
    path: ['base'],
  })
  .refine((input) => input.fallbackModel === undefined || input.fallbackModel !== input.model, {
    message: 'must differ from model (a fallback is another model)',
    path: ['fallbackModel'],
  });

/** Turns zod issues into one line per problem, each naming its key path. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const key = issue.path.length > 0 ? issue.path.map(String).join('.') : 'input';
    return `${key}: ${issue.message}`;
  });
}

/** Validates project input; throws `ProjectError('invalid_input')` listing every problem. */
export function parseProjectInput(input: unknown): ProjectInput {
  const parsed = projectInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new ProjectError(
      'invalid_input',
      `invalid project: ${formatIssues(parsed.error.issues).join('; ')}`,
    );
  }
  return stripUndefined(parsed.data) as ProjectInput;
}

/** exactOptionalPropertyTypes: zod leaves `key: undefined` out already, this keeps nested objects honest. */
function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export function emptyCounters(): ProjectCounters {
  return {
    sessions: 0,
    sessionsStarted: 0,
    featuresPassing: 0,
    featuresTotal: 0,
    featuresVerified: 0,
    featuresClaimed: 0,
    featuresRegressed: 0,
    inputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 0,
    clearedInputTokens: 0,
    costUsd: 0,
    consecutiveFailures: 0,
    sessionsWithoutProgress: 0,
    uselessContextFills: 0,
    interruptions: 0,
  };
}

/** Statuses from which no session runs until someone calls `resume`. */
export function isTerminalStatus(status: ProjectStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}
