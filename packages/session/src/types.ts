import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaClearThinking20251015EditResponse,
  BetaClearToolUses20250919EditResponse,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type {
  CacheInvalidation,
  ResolvedContextConfig,
  TurnUsage,
  UsageTotals,
} from '@baton/context-config';
import type { MemoryChange, MemoryQuotaEnforcement, MemoryStore } from '@baton/core';
import type { FeatureCounts } from './features.js';
import type { OrientationOptions } from './orientation.js';
import type { ProgressRolloverOptions } from './progress-log.js';
import type {
  Checkpoint,
  CheckpointHooks,
  CheckpointRequest,
  SandboxDescription,
  SpecialFileKind,
} from '@baton/workspace';
import type { GuidanceSource } from './guidance.js';
import type { RetryOptions } from './retry.js';
import type { TranscriptSink } from './transcript.js';
import type { WorkspaceToolsOptions } from './tools/types.js';
import type { McpConfig } from './mcp/config.js';
import type { McpServerStatus } from './mcp/mcp-servers.js';
import type {
  CheckEvidence,
  FeatureChecks,
  VerificationCounts,
  VerificationOptions,
} from './verification.js';

/** What a session is for: build the memory from the goal, continue the work, or only close the log. */
export type SessionKind = 'init' | 'resume' | 'end';

/** How a session ended. */
export type SessionOutcome =
  'completed' | 'budget_exhausted' | 'paused' | 'cancelled' | 'failed' | 'refused';

/** Limits of one session. When one is reached the agent gets its end-of-session turn, then the session stops. */
export interface SessionBudgets {
  /** Most model turns (requests) in the working phase. Default: unlimited. */
  maxTurns?: number;
  /** Most input tokens (sum over turns, as reported by the API after context editing). Default: unlimited. */
  maxInputTokens?: number;
  /** Most output tokens. Default: unlimited. */
  maxOutputTokens?: number;
  /** Most spend in USD (prices from @baton/context-config). Default: unlimited. */
  maxUsd?: number;
  /** Most wall-clock time in milliseconds; an in-flight request is aborted when it runs out. Default: unlimited. */
  wallClockMs?: number;
}

/** The project a session works on. */
export interface ProjectInfo {
  id: string;
  goal: string;
}

/** Options of `runSession`. */
export interface RunSessionOptions {
  /** The project (id and goal). */
  project: ProjectInfo;
  /** Which prompt starts the session. */
  kind: SessionKind;
  /** The project's memory. */
  store: MemoryStore;
  /**
   * Who enforces the memory tool's store-wide quotas (`@baton/core`'s `quotaEnforcement`). Pass
   * `'store'` when `store` was created with `memoryStoreLimits()`: atomic quotas and no `usage()`
   * round trip per memory write. Default `'handler'`, safe with a store created without limits.
   */
  memoryQuotaEnforcement?: MemoryQuotaEnforcement;
  /** Absolute directory of the project's workspace (must exist). */
  workspace: string;
  /** A real SDK client (its `baseURL` may point at @baton/model-sim). Its own retries are not used. */
  client: Anthropic;
  /** Model id. */
  model: string;
  /**
   * Model id the session continues on when `model` still answers overloaded (HTTP 529 or a
   * mid-stream `overloaded_error`) after the retries; the rest of the session stays on it and is
   * priced at its prices. Default: none (the session fails with `api_error`, as without it).
   */
  fallbackModel?: string;
  /** Context editing. Default `defineContextConfig({ preset: 'coding' })`. */
  context?: ResolvedContextConfig;
  /** Session budgets. Default: none. */
  budgets?: SessionBudgets;
  /** Bash and text-editor options (command policy, timeouts, output caps). */
  tools?: WorkspaceToolsOptions;
  /**
   * Aborting it cancels the session: the request in flight is aborted and the end-of-session turn
   * runs if time allows. Aborted with the reason `'lease_lost'` or `'lock_lost'` (another worker
   * may run the project now), the session is abandoned: no end-of-session turn, no further model
   * request, no end-of-session checks.
   */
  signal?: AbortSignal;
  /**
   * Aborting it pauses the project: the working phase stops as at a budget (the request in flight
   * is aborted), the agent gets its end-of-session turn, and the outcome is `paused`, not
   * `cancelled`. Default: none.
   */
  pauseSignal?: AbortSignal;
  /**
   * The operator's guidance (`baton say`): read before every request; new messages go with it as
   * `<operator_guidance>` text blocks, unacknowledged ones open the first message. Default: none.
   */
  guidance?: GuidanceSource;
  /**
   * Where the session's transcript goes (transcript.ts): the first prompt, every message, tool
   * call and tool result (capped, marked), usage and applied context edits per turn, operator
   * guidance, all redacted, appended as each step completes. Errors it throws are ignored.
   * Default: no transcript.
   */
  transcript?: TranscriptSink;
  /** Receives every `SessionEvent`. Errors it throws are ignored. */
  onEvent?: (event: SessionEvent) => void | Promise<void>;
  /** Default: a random UUID. */
  sessionId?: string;
  /** 1-based number of this session in the project, for prompts and commits. Default 1. */
  sessionNumber?: number;
  /** The previous session of this project was interrupted. Default false. */
  interrupted?: boolean;
  /** `max_tokens` of each response. Default 4096. */
  maxTokens?: number;
  /**
   * The model's context window in tokens. Before each request the session adds what it is about
   * to send to the last response's input and output tokens; when that and `max_tokens` no longer
   * fit, it hands off to the next session (stop reason `context_full`) instead of sending a
   * prompt the API would refuse. Default: the model's `max_input_tokens` from the Models API
   * (`GET /v1/models/{model}`), asked once per model; unknown (no counter) when that fails.
   */
  contextWindow?: number | undefined;
  /**
   * Read each response as a stream (`messages.stream(...).finalMessage()`) instead of one JSON
   * body. `true` (default): always, as the API advises for long requests, so a worker meets the
   * API's mid-stream `error` events and cut streams as they happen. `'auto'`: stream only when
   * `maxTokens` is above `NON_STREAMING_MAX_TOKENS`, where the SDK refuses non-streaming calls
   * ("may take longer than 10 minutes"). Either way the session sees the same final message;
   * retries, budgets and cancellation work alike.
   */
  streaming?: boolean | 'auto';
  /** API retries. Default `DEFAULT_RETRY_OPTIONS`. */
  retry?: RetryOptions;
  /** Time allowed for the end-of-session turn (all its requests together), in ms. Default 30_000. */
  endOfSessionTimeoutMs?: number;
  /** Most turns of the end-of-session phase. Default 8. */
  endOfSessionMaxTurns?: number;
  /** `max_tokens` stops in a row before the session gives up. Default 3. */
  maxConsecutiveMaxTokens?: number;
  /**
   * When the progress log rolls over into `/memories/progress/` archives (checked at the start of
   * every resume and end session). Default `DEFAULT_PROGRESS_ROLLOVER`: above 8,000 characters,
   * keep the latest 3,000, archives of at most 12,000.
   */
  progressLog?: ProgressRolloverOptions;
  /**
   * The orientation put in the first user message of resume and end sessions (orientation.ts),
   * or `false` for none. Default: 3 next features, the 2 latest entries.
   */
  orientation?: OrientationOptions | false;
  /** The workspace's last acknowledged checkpoint, shown in the orientation. Default: not shown. */
  lastCheckpoint?: string | null;
  /**
   * Save the workspace as checkpoints (commit + push) during and at the end of the session.
   * Default: none (the session leaves the workspace as it is).
   */
  checkpoints?: SessionCheckpoints | undefined;
  /**
   * Verified progress (verification.ts): Baton runs a feature's `check` in the sandbox before it
   * accepts `passes: true`, and re-runs passing features' checks at the end of the session.
   * `false` turns it off (flips are taken on the model's word). Default: on, with the defaults
   * of `VerificationOptions` and no record of earlier sessions.
   */
  verification?: VerificationOptions | false;
  /**
   * MCP servers (docs/mcp.md): started in the session's sandbox at its start, their tools offered
   * as `mcp__<server>__<tool>` for the whole session, stopped at its end. Default: the
   * repository's `.mcp.json` only.
   */
  mcp?: SessionMcpOptions;
}

/** Where a session's MCP servers come from, lowest precedence first, and how they start. */
export interface SessionMcpOptions {
  /** The worker-wide configuration (`BATON_MCP_CONFIG`). Default none. */
  worker?: McpConfig | undefined;
  /** Read the workspace's `.mcp.json` (its `${VAR}` references are never expanded). Default true. */
  repository?: boolean | undefined;
  /** The project's own configuration (`--mcp-config`, the control API's `mcp`). Default none. */
  project?: McpConfig | undefined;
  /** Where `${VAR}` references are read from. Default `process.env`. */
  environment?: Readonly<Record<string, string | undefined>> | undefined;
  /** How long each server may take to start and list its tools, in ms. Default 30_000. */
  startTimeoutMs?: number | undefined;
}

/** Why a checkpoint was made. */
export type SessionCheckpointReason = 'turn' | 'memory' | 'end';

/** Where and how often a session saves its workspace. */
export interface SessionCheckpoints {
  /** The project's prepared workspace (`openProjectWorkspace` from `@baton/workspace`). */
  target: {
    checkpoint(request: CheckpointRequest): Promise<Checkpoint>;
    /** Its git directory: the sandbox shows it read-only so `git status`/`diff`/`log` work. */
    readonly gitDir?: string;
  };
  /**
   * Least time between two checkpoints after turns that changed the workspace (ms); a memory
   * write after workspace changes and the end of the session always checkpoint. Default 5000.
   */
  intervalMs?: number | undefined;
}

/** Summary of one session. */
export interface SessionResult {
  sessionId: string;
  kind: SessionKind;
  outcome: SessionOutcome;
  /** Readable reason it stopped. */
  reason: string;
  /** Machine reason: `end_turn`, `max_turns`, `max_input_tokens`, `max_output_tokens`, `max_usd`, `wall_clock`, `paused`, `cancelled`, `refusal`, `max_tokens`, `context_full` (the context window filled: a 400 "prompt is too long" or `model_context_window_exceeded`; the next session continues), `auth` (the API refused the key: 401/403), `model_not_found` (404 for the model), `api_error`, `push_rejected`, `internal_error`. */
  stopReason?: string;
  /** Model turns (requests answered), end-of-session phase included. */
  turns: number;
  usage: UsageTotals;
  featuresBefore: FeatureCounts;
  featuresAfter: FeatureCounts;
  allFeaturesPass: boolean;
  /** Ids flipped to `passes: true` in this session. */
  flippedFeatures: string[];
  /**
   * The context window filled (`stopReason: 'context_full'`): at which turn, and whether the
   * session did anything useful before (flipped a feature or saved workspace changes). Two
   * sessions in a row that filled it with nothing useful pause the project (`context_full`).
   */
  contextFull?: { turn: number; useful: boolean } | undefined;
  startedAt: number;
  endedAt: number;
  error?: string | undefined;
  /**
   * The end-of-session checkpoint, when the session has `checkpoints`; its `hooks` sum up the
   * whole session (`refused` if any checkpoint's hooks refused).
   */
  checkpoint?: Checkpoint;
  /**
   * Why the end-of-session checkpoint could not be committed (the session's work is then not on
   * the project branch): the project must not be marked completed.
   */
  checkpointError?: string | undefined;
  /** How many of the session's checkpoints failed to commit (each retried at the next one). */
  checkpointFailures?: number | undefined;
  /** Every commit the session's checkpoints made, oldest first (empty without `checkpoints`). */
  commits: string[];
  /**
   * Who wrote this session's progress entry: `agent`, or `baton` when the agent wrote none and
   * Baton appended one (marked as such); `none` if the memory could not be read or written.
   */
  progressEntry: 'agent' | 'baton' | 'none';
  /** Set when the session moved to its fallback model (see `RunSessionOptions.fallbackModel`). */
  fallback?: SessionFallback | undefined;
  /**
   * The project's check record after this session (the previous record with this session's
   * runs laid over it): pass it as `verification.previous` to the next session. Absent when
   * verification is off.
   */
  checks?: FeatureChecks;
  /** Verified, claimed, regressed and unverified features after this session (absent when off). */
  verification?: SessionVerification;
  /** The session's MCP servers and how each stood at its end (absent without servers). */
  mcp?: McpServerStatus[];
}

/** What a session's verification left: counts, and what the end-of-session re-run did. */
export interface SessionVerification extends VerificationCounts {
  /**
   * Passing features whose check has not passed on the final commit (the budget ran out, or a
   * check was cut short): a project does not complete while any is left.
   */
  pending: number;
  /** Features flipped back to failing by the end-of-session re-run. */
  regressedIds: string[];
  /** Checks re-run at the end of the session, and the time they took (ms). */
  rerun: number;
  rerunMs: number;
}

/** The session's move from an overloaded model to its fallback model. */
export interface SessionFallback {
  /** The model that stayed overloaded. */
  from: string;
  /** The fallback model the rest of the session ran on. */
  to: string;
  /** The turn (1-based request number) that was the first one sent to `to`. */
  turn: number;
  at: number;
}

/** Usage of one turn as carried by the `turn` event: context-config's accounting of it. */
export type { TurnUsage } from '@baton/context-config';

/** One applied context edit, as the API reports it. */
export type AppliedEdit =
  BetaClearToolUses20250919EditResponse | BetaClearThinking20251015EditResponse;

/** How a session learnt that its context window is full (the `context-full` event). */
export type ContextFullCause = 'counter' | 'prompt_too_long' | 'stop_reason';

interface EventBase {
  v: 1;
  at: number;
  projectId: string;
  sessionId: string;
}

/** Everything a session reports. JSON-serialisable and versioned (`v`). */
export type SessionEvent =
  | (EventBase & {
      type: 'session-start';
      kind: SessionKind;
      sessionNumber: number;
      interrupted: boolean;
      model: string;
      /** Where this session's commands run; `mode: 'off'` is said loudly everywhere it shows. */
      sandbox: SandboxDescription;
    })
  | (EventBase & {
      type: 'turn';
      turn: number;
      /** The model the request named (the fallback model after a `model-fallback`). */
      model: string;
      /** The response's `model` (the API may answer an alias with the model's full id). */
      responseModel: string;
      /** The response's `id`. */
      responseId: string;
      /** `work` for the main loop, `end` for the end-of-session phase. */
      phase: 'work' | 'end';
      stopReason: string;
      durationMs: number;
      usage: TurnUsage;
      appliedEdits: AppliedEdit[];
      clearedInputTokens: number;
      /** What this turn's applied edits cost in cache rewrites; null without edits. */
      cacheInvalidation: CacheInvalidation | null;
      costUsd: number;
      /** Session totals after this turn. */
      totals: UsageTotals;
    })
  | (EventBase & {
      type: 'tool-call';
      turn: number;
      tool: string;
      /** The `tool_use` block's id (absent in events recorded before it was carried). */
      toolUseId?: string;
      summary: string;
      isError: boolean;
      /** The sandbox limit that stopped or failed the call, as the model was told it. */
      limit?: string | undefined;
      durationMs: number;
    })
  | (EventBase & { type: 'memory-change'; change: MemoryChange })
  /** An MCP server of the session started (`ready`), could not start (`failed`) or died (`exited`). */
  | (EventBase & { type: 'mcp-server' } & McpServerStatus)
  /** The model stayed overloaded after the retries: the session continues on its fallback model. */
  | (EventBase & {
      type: 'model-fallback';
      from: string;
      to: string;
      /** The turn that goes to `to` first. */
      turn: number;
      /** The last error's HTTP status (absent for a mid-stream overloaded_error). */
      status?: number | undefined;
      message: string;
    })
  /**
   * The context window is full: the session stops its work here, closes the progress log from a
   * fresh context, and the next session continues.
   */
  | (EventBase & {
      type: 'context-full';
      /** The request that did not fit (`counter`, `prompt_too_long`) or the response that filled it. */
      turn: number;
      /**
       * `counter`: Baton's count said the next request would not fit; `prompt_too_long`: the API
       * refused the prompt (400); `stop_reason`: a response stopped with
       * `model_context_window_exceeded`.
       */
      cause: ContextFullCause;
      /** The prompt's tokens as counted (`counter`) or as the API said (`prompt_too_long`); null when unknown. */
      promptTokens: number | null;
      /** The model's context window; null when unknown. */
      contextWindow: number | null;
    })
  /** The model answered with nothing at all (`content: []`); `nudged`: Baton asked it to continue. */
  | (EventBase & { type: 'empty-reply'; turn: number; nudged: boolean })
  | (EventBase & {
      type: 'api-retry';
      attempt: number;
      status?: number | undefined;
      delayMs: number;
      message: string;
    })
  /** A checkpoint: the workspace committed (unless unchanged) and the branch pushed (or not). */
  | (EventBase & {
      type: 'checkpoint';
      reason: SessionCheckpointReason;
      /** The commit made, `null` when nothing had changed. */
      commit: string | null;
      /** The branch tip after the checkpoint. */
      head: string | null;
      /** True when `head` reached the project's remote: the checkpoint is acknowledged. */
      pushed: boolean;
      hooks: CheckpointHooks;
      /** Files left out as secrets. */
      skipped: string[];
      /** Files left out because they are larger than the per-file limit (default 50 MiB). */
      tooLarge?: Array<{ path: string; bytes: number }>;
      /** FIFOs, sockets and devices left out (git cannot store them). */
      special?: Array<{ path: string; kind: SpecialFileKind }>;
      /** Why the commit or the push failed. */
      error?: string | undefined;
      /**
       * The push took the branch back from a replaced session's late push (a lease that moved
       * on): its stale tip is kept on the side branch `keptOn`, and this session's work is on the
       * project branch. A warning: the user may want what the stale commits hold.
       */
      replacedStale?: { tip: string; fence: number; commits: number; keptOn: string } | undefined;
    })
  /** Operator guidance went to the model with the request of `turn`. */
  | (EventBase & {
      type: 'guidance-delivered';
      guidanceIds: string[];
      /** The request that carried it (1-based). */
      turn: number;
      /** In the session's first message (left unacknowledged by an earlier session). */
      inFirstMessage: boolean;
    })
  /** Baton ran a feature's check and it passed (before accepting a flip, or in the re-run). */
  | (EventBase & { type: 'check-passed'; evidence: CheckEvidence })
  /** Baton ran a feature's check and it failed or timed out. */
  | (EventBase & { type: 'check-failed'; evidence: CheckEvidence })
  /** A passing feature's re-run check failed: Baton flipped it back to failing. */
  | (EventBase & { type: 'feature-regressed'; featureId: string; evidence: CheckEvidence })
  | (EventBase & { type: 'session-end'; result: SessionResult });

/** The `type` of every event. */
export type SessionEventType = SessionEvent['type'];
