import type {
  BetaMessage,
  BetaToolUseBlock,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { redactThenCut } from '@baton/core';
import {
  type TurnAccounting,
  type UsageAccumulator,
  createUsageAccumulator,
  estimateInputTokens,
  mirrorAppliedEdits,
  totalInputTokens,
  withCacheBreakpoints,
} from '@baton/context-config';
import { DEFAULT_SANDBOX_SETUP, describeSandbox } from '@baton/workspace';
import {
  allFeaturesPass,
  countFeatures,
  flippedFeatureIds,
  normalizeFeaturesLayout,
  readFeatures,
} from '../features.js';
import { buildOrientation } from '../orientation.js';
import { readProgressEntries, rollOverProgressLog } from '../progress-log.js';
import { appendContextFullLine, fillProgressGap } from './progress-gap.js';
import type { Feature } from '../features.js';
import {
  type PromptContext,
  renderEndOfSessionPrompt,
  renderSessionPrompt,
  renderSystemPrompt,
} from '../prompts.js';
import { type OperatorGuidance, renderGuidance } from '../guidance.js';
import { classifyFailure, isOverloaded, withRetries } from '../retry.js';
import { createBashTool } from '../tools/bash.js';
import { SessionSandbox } from './session-sandbox.js';
import { createSessionMemoryTool } from '../tools/memory.js';
import { createTextEditorTool } from '../tools/text-editor.js';
import type {
  RunSessionOptions,
  SessionBudgets,
  SessionFallback,
  SessionResult,
} from '../types.js';
import { Checkpointer } from './checkpoints.js';
import { FeatureVerifier } from './feature-verifier.js';
import { countVerification, pendingChecks } from '../verification.js';
import { Conversation } from './conversation.js';
import { type EventBody, createEmitter } from './events.js';
import {
  type PhaseStop,
  type StopVerdict,
  endPhaseNote,
  errorMessage,
  verdictFor,
} from './phase-stop.js';
import { type Toolbox, createToolbox } from './toolbox.js';
import { startSessionMcp } from '../mcp/session-mcp.js';
import type { McpSession } from '../mcp/mcp-servers.js';
import { TranscriptRecorder } from './transcript-recorder.js';
import { WorkSignal } from './work-signal.js';

const DEFAULT_MAX_TOKENS = 4096;

/**
 * The largest `max_tokens` the SDK accepts without streaming: it refuses a non-streaming call
 * whose expected time (60 min x max_tokens / 128,000) exceeds 10 minutes.
 */
export const NON_STREAMING_MAX_TOKENS = 21_333;
const DEFAULT_END_TIMEOUT_MS = 30_000;
const DEFAULT_END_MAX_TURNS = 8;
const DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS = 3;

const CUT_TOOL_CALL =
  'Not run: your response hit the max_tokens limit, so this tool call may be incomplete. Send it again, shorter.';
/** The most output room a cut tool call is retried with. */
const MAX_TOKENS_CEILING = 32_000;
const EMPTY_REPLY_NUDGE = 'Your reply was empty. Please continue with the task.';
/**
 * What the context counter keeps free, beyond the end-of-session prompt, for the working phase's
 * last reply (usually a short summary) before the end-of-session turn. A longer reply moves the
 * end-of-session turn to a fresh context (the counter checks that phase too).
 */
const END_OF_SESSION_REPLY_ROOM = 512;
const CONTINUE_AFTER_CUT =
  'Your last response was cut off by the max_tokens limit. Continue where you stopped, in shorter steps.';

/** One phase of the loop: working, or closing the progress log. */
interface Phase {
  name: 'work' | 'end';
  signal: AbortSignal;
  maxTurns: number;
  turns: number;
  maxTokensInARow: number;
  /** An empty reply was answered with a nudge, and no reply with content came since. */
  nudgedEmpty: boolean;
  /** End phase: why the session closes, and whether it already runs in a fresh context. */
  end?: { reason: string; fresh: boolean };
}

/** What one answered turn asks the loop to do: go on, or stop the phase. */
type StopReasonStep = (
  runner: SessionRunner,
  toolUses: BetaToolUseBlock[],
  phase: Phase,
) => Promise<PhaseStop | undefined> | PhaseStop | undefined;

/** From a response's `stop_reason` to the next step; anything else ends the phase. */
const ON_STOP_REASON: Readonly<Record<string, StopReasonStep>> = {
  tool_use: async (runner, toolUses, phase) => {
    runner.conversation.add(...(await runner.toolbox.run(toolUses, runner.turns, phase.signal)));
    runner.addCheckpointNotes();
    return undefined;
  },
  // The server paused a long turn (or compacted): send the conversation back to continue.
  pause_turn: () => undefined,
  compaction: () => undefined,
  max_tokens: (runner, toolUses, phase) => {
    // A cut tool call has incomplete input: it is never run. It got here after a retry with
    // more room cut it again, so the model is told to make it smaller.
    for (const block of toolUses) {
      runner.conversation.add({
        type: 'tool_result',
        tool_use_id: block.id,
        is_error: true,
        content: `${CUT_TOOL_CALL} It was cut at ${runner.outputRoom} tokens even with more room: split it into smaller steps (for example, write a large file in several edits).`,
      });
    }
    if (phase.maxTokensInARow >= runner.maxConsecutiveMaxTokens) return { kind: 'max_tokens' };
    runner.conversation.addText(CONTINUE_AFTER_CUT, { source: 'note' });
    return undefined;
  },
  refusal: () => ({ kind: 'refusal' }),
  model_context_window_exceeded: (runner) => ({
    kind: 'context_window',
    turn: runner.turns,
    cause: 'stop_reason',
    promptTokens: null,
    contextWindow: null,
  }),
};

function isToolUse(block: BetaMessage['content'][number]): block is BetaToolUseBlock {
  return block.type === 'tool_use';
}

/**
 * What an API error (after the retries) means for the phase: a prompt over the context window is
 * a full context, not a failure; a refused key (401/403) and an unknown model (404) have their
 * own verdicts; anything else is an API error.
 */
function stopForApiError(error: unknown, turn: number): PhaseStop {
  const failure = classifyFailure(error);
  const message = errorMessage(error);
  const tooLong = /prompt is too long: (\d+) tokens > (\d+) maximum/i.exec(message);
  if (failure.status === 400 && (tooLong !== null || /prompt is too long/i.test(message))) {
    return {
      kind: 'context_window',
      turn,
      cause: 'prompt_too_long',
      promptTokens: tooLong === null ? null : Number(tooLong[1]),
      contextWindow: tooLong === null ? null : Number(tooLong[2]),
    };
  }
  if (failure.status === 401 || failure.status === 403) return { kind: 'auth', error };
  if (failure.status === 404 && apiErrorType(error) === 'not_found_error') {
    return { kind: 'model_not_found', error };
  }
  return { kind: 'api_error', error };
}

/** The `error.type` of an API error body, or ''. */
function apiErrorType(error: unknown): string {
  const body = (error as { error?: { error?: { type?: unknown } } } | null)?.error;
  return typeof body?.error?.type === 'string' ? body.error.type : '';
}

/**
 * One session, as a short sequence of named steps: start, the working phase, the verdict, the
 * end-of-session phase, the commit, the result. `runSession` validates its options and runs one.
 */
export class SessionRunner {
  readonly conversation: Conversation;
  readonly toolbox: Toolbox;
  readonly maxConsecutiveMaxTokens: number;
  turns = 0;

  readonly #options: RunSessionOptions;
  readonly #sessionId: string;
  readonly #sessionNumber: number;
  readonly #interrupted: boolean;
  readonly #budgets: SessionBudgets;
  /** `max_tokens` of the next request: raised when a tool call was cut for want of room. */
  #maxTokens: number;
  readonly #streaming: boolean | 'auto';
  readonly #accumulator: UsageAccumulator;
  readonly #emit: (body: EventBody) => Promise<void>;
  readonly #promptContext: PromptContext;
  readonly #system: string;
  readonly #context: NonNullable<RunSessionOptions['context']>;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #verifier: FeatureVerifier | undefined;
  #work: WorkSignal | undefined;
  /** The model requests go to: `options.model`, or the fallback model once it stayed overloaded. */
  #model: string;
  #fallback: SessionFallback | undefined;
  #pushRejected: string | undefined;
  /** Guidance ids sent to the model in this session, and those no response has answered yet. */
  readonly #guidanceSent = new Set<string>();
  #guidanceUnanswered: string[] = [];
  #orientation = '';
  readonly #transcript: TranscriptRecorder;
  #phase: Phase['name'] = 'work';
  readonly #root: string;
  /** One line per MCP server (or configuration) that could not be used, for the first message. */
  #mcpNotes: string[] = [];
  /**
   * The context window of each model asked for (the `contextWindow` option, else the Models
   * API's `max_input_tokens`); null: unknown, so the session does not count.
   */
  readonly #contextWindows = new Map<string, Promise<number | null>>();
  /** The last answered request: its input tokens as the API counted them, and as Baton estimates them. */
  #lastPrompt: { tokens: number; estimate: number } | undefined;
  /** Baton's estimate of the request in flight (the same estimate as `#lastPrompt.estimate`). */
  #sentEstimate = 0;
  /** Baton's estimate of the end-of-session prompt (asked once). */
  #closingTokens: number | undefined;
  #mcp: McpSession | undefined;
  /** The session's one sandbox: bash and stdio MCP servers share its loopback. */
  #sandbox: SessionSandbox | undefined;
  /** Tool calls by tool name, and how many failed, for the entry Baton writes when the agent wrote none. */
  readonly #toolCalls = new Map<string, { calls: number; failed: number }>();

  constructor(
    options: RunSessionOptions & { context: NonNullable<RunSessionOptions['context']> },
    root: string,
    sessionId: string,
  ) {
    this.#options = options;
    this.#sessionId = sessionId;
    const transcript = new TranscriptRecorder(options.transcript, sessionId);
    this.#transcript = transcript;
    this.conversation = new Conversation((blocks, label) => transcript.queued(blocks, label));
    this.#root = root;
    this.#sessionNumber = options.sessionNumber ?? 1;
    this.#model = options.model;
    this.#interrupted = options.interrupted ?? false;
    this.#context = options.context;
    this.#budgets = options.budgets ?? {};
    this.#maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
    this.#streaming = options.streaming ?? true;
    this.maxConsecutiveMaxTokens =
      options.maxConsecutiveMaxTokens ?? DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS;
    this.#accumulator = createUsageAccumulator({ model: options.model });
    const emit = createEmitter(options.onEvent, { projectId: options.project.id, sessionId });
    this.#emit = (body) => {
      if (body.type === 'tool-call') this.#countToolCall(body.tool, body.isError);
      return emit(body);
    };
    this.#promptContext = {
      projectId: options.project.id,
      goal: options.project.goal,
      sessionNumber: this.#sessionNumber,
      interrupted: this.#interrupted,
    };
    this.#system = renderSystemPrompt();
    this.#checkpointer = this.#createCheckpointer();
    this.#verifier = this.#createVerifier(root);
    this.toolbox = this.#createToolbox(root);
  }

  #countToolCall(tool: string, isError: boolean): void {
    const seen = this.#toolCalls.get(tool) ?? { calls: 0, failed: 0 };
    this.#toolCalls.set(tool, { calls: seen.calls + 1, failed: seen.failed + (isError ? 1 : 0) });
  }

  /** Saves and pushes the workspace during the session, when the caller asked for checkpoints. */
  #createCheckpointer(): Checkpointer | undefined {
    const options = this.#options;
    if (options.checkpoints === undefined) return undefined;
    return new Checkpointer({
      checkpoints: options.checkpoints,
      subject: `baton: session ${this.#sessionNumber} (${options.kind}) of ${options.project.id}`,
      trailers: [['Session-Id', this.#sessionId]],
      emit: this.#emit,
      onRejected: (message) => {
        // Work that cannot be pushed is work a later session cannot continue from.
        this.#pushRejected = message;
        this.#work?.abort('push_rejected');
      },
    });
  }

  /** Runs features' checks in the sandbox (flips and the end-of-session re-run), unless off. */
  #createVerifier(root: string): FeatureVerifier | undefined {
    const options = this.#options;
    if (options.verification === false) return undefined;
    return new FeatureVerifier({
      root,
      sandbox: options.tools?.sandbox,
      gitDir: options.checkpoints?.target.gitDir,
      env: options.tools?.env,
      verification: options.verification ?? {},
      sessionId: this.#sessionId,
      sessionNumber: this.#sessionNumber,
      // A memory write after workspace changes is preceded by a checkpoint (Checkpointer), so
      // the last checkpoint's head is the commit the check runs on.
      commit: async () => this.#checkpointer?.last?.head ?? options.lastCheckpoint ?? null,
      emit: this.#emit,
    });
  }

  /** The memory, bash and text-editor tools, with checkpoints around tool calls. */
  #createToolbox(root: string): Toolbox {
    const options = this.#options;
    const checkpointer = this.#checkpointer;
    return createToolbox(
      [
        createSessionMemoryTool({
          store: options.store,
          session: this.#sessionId,
          allowFeatureAdditions: options.kind === 'init',
          ...(options.memoryQuotaEnforcement === undefined
            ? {}
            : { quotaEnforcement: options.memoryQuotaEnforcement }),
          onChange: (change) => this.#emit({ type: 'memory-change', change }),
          verifyFlips:
            this.#verifier === undefined
              ? undefined
              : (ids, after) =>
                  this.#verifier?.verifyFlips(ids, after) ??
                  Promise.resolve({ accepted: false, message: 'Refused.' }),
        }),
        createBashTool({
          ...options.tools,
          root,
          ...(options.checkpoints?.target.gitDir === undefined
            ? {}
            : { gitDir: options.checkpoints.target.gitDir }),
          sessionSandbox: this.#sessionSandbox(root),
        }),
        createTextEditorTool({ ...options.tools, root }),
      ],
      this.#emit,
      checkpointer === undefined
        ? {}
        : {
            beforeCall: (block) => checkpointer.beforeToolCall(block).then(() => undefined),
            afterCalls: (blocks) => checkpointer.afterToolCalls(blocks),
          },
    );
  }

  /** The session's one sandbox, made (not opened) at first ask. */
  #sessionSandbox(root: string): SessionSandbox {
    this.#sandbox ??= new SessionSandbox({
      root,
      setup: this.#options.tools?.sandbox,
      gitDir: this.#options.checkpoints?.target.gitDir,
    });
    return this.#sandbox;
  }

  /** The `max_tokens` requests are sent with now. */
  get outputRoom(): number {
    return this.#maxTokens;
  }

  /** Stream when asked to, or (`auto`) when `max_tokens` is above the SDK's non-streaming limit. */
  #streams(): boolean {
    return (
      this.#streaming === true ||
      (this.#streaming === 'auto' && this.#maxTokens > NON_STREAMING_MAX_TOKENS)
    );
  }

  /** What the checkpoints of the last tool calls have to tell the model (hook refusals). */
  addCheckpointNotes(): void {
    for (const note of this.#checkpointer?.takeNotes() ?? []) {
      this.conversation.addText(note, { source: 'note' });
    }
  }

  async run(): Promise<SessionResult> {
    const startedAt = Date.now();
    await this.#prepareMemory();
    const featuresBefore = await readFeatures(this.#options.store);
    const entriesBefore = (await readProgressEntries(this.#options.store)).length;
    await this.#announceStart(startedAt);
    await this.#startMcpServers();
    const work = new WorkSignal(
      this.#options.signal,
      this.#budgets.wallClockMs,
      this.#options.pauseSignal,
    );
    this.#work = work;
    const verdict = await this.#workAndVerdict(work);
    const result = await this.#result(verdict, featuresBefore, startedAt);
    result.progressEntry = await this.#closeProgressGap(result, entriesBefore);
    if (this.#mcp !== undefined) result.mcp = this.#mcp.statuses.map((status) => ({ ...status }));
    await this.#finalCheckpoint(result);
    await this.#verifyAtEnd(result);
    result.endedAt = Date.now();
    await this.#transcript.end(this.turns + 1, this.#phase, {
      endedAt: result.endedAt,
      outcome: result.outcome,
      reason: result.reason,
      ...(result.stopReason === undefined ? {} : { stopReason: result.stopReason }),
      turns: result.turns,
      costUsd: result.usage.costUsd,
      ...(result.fallback === undefined ? {} : { fallback: result.fallback }),
    });
    await this.#emit({ type: 'session-end', result });
    return result;
  }

  /**
   * Starts the session's MCP servers and adds their tools (sorted, after the built-in ones) before
   * the first request, so the tool list stays one cached prefix for the whole session.
   */
  async #startMcpServers(): Promise<void> {
    const options = this.#options;
    const started = await startSessionMcp({
      mcp: options.mcp,
      root: this.#root,
      sandbox: options.tools?.sandbox,
      gitDir: options.checkpoints?.target.gitDir,
      sessionSandbox: this.#sessionSandbox(this.#root),
      maxOutputChars: options.tools?.maxOutputChars,
      onStatus: (status) => this.#emit({ type: 'mcp-server', ...status }),
    });
    this.#mcpNotes = started.notes;
    const session = started.session;
    this.#mcp = session;
    if (session !== undefined) this.toolbox.add(session.tools, () => session.dispose());
  }

  /** Tells observers and the transcript that the session started, and how. */
  async #announceStart(startedAt: number): Promise<void> {
    await this.#emit({
      type: 'session-start',
      kind: this.#options.kind,
      sessionNumber: this.#sessionNumber,
      interrupted: this.#interrupted,
      model: this.#options.model,
      sandbox: describeSandbox(this.#options.tools?.sandbox ?? DEFAULT_SANDBOX_SETUP),
    });
    await this.#transcript.start({
      projectId: this.#options.project.id,
      sessionId: this.#sessionId,
      sessionNumber: this.#sessionNumber,
      kind: this.#options.kind,
      model: this.#options.model,
      interrupted: this.#interrupted,
      startedAt,
    });
  }

  /**
   * The working phase and its verdict; a session that must stop early closes its progress log
   * first. Whatever happens, the session's processes are gone before anything is saved.
   */
  async #workAndVerdict(work: WorkSignal): Promise<StopVerdict> {
    let verdict: StopVerdict;
    try {
      const early = await this.#newGuidance();
      this.conversation.addText(this.#firstPrompt(early), {
        source: 'prompt',
        guidanceIds: early.map((entry) => entry.id),
      });
      for (const note of this.#mcpNotes) this.conversation.addText(note, { source: 'note' });
      await this.#guidanceQueued(early, true);
      const stop = await this.#runPhase('work', work.signal, this.#workMaxTurns());
      if (stop.kind === 'context_window') {
        await this.#emit({
          type: 'context-full',
          turn: stop.turn,
          cause: stop.cause,
          promptTokens: stop.promptTokens,
          contextWindow: stop.contextWindow,
        });
      }
      verdict = verdictFor(stop, {
        model: this.#model,
        abortCause: work.cause,
        ...(this.#pushRejected === undefined ? {} : { pushRejected: this.#pushRejected }),
        turns: this.turns,
        maxConsecutiveMaxTokens: this.maxConsecutiveMaxTokens,
      });
      if (verdict.endReason !== undefined && this.#options.kind !== 'end') {
        verdict = { ...verdict, reason: verdict.reason + (await this.#closeLog(verdict)) };
      }
    } catch (caught) {
      const error = errorMessage(caught);
      verdict = {
        outcome: 'failed',
        stopReason: 'internal_error',
        reason: `The session failed unexpectedly: ${error}`,
        error,
      };
    } finally {
      work.dispose();
      // Every process the session's commands left is gone before the workspace is saved.
      await this.toolbox.dispose();
      await this.#sandbox?.dispose();
    }
    return verdict;
  }

  #firstPrompt(guidance: readonly OperatorGuidance[]): string {
    const kind = this.#options.kind;
    return renderSessionPrompt(kind, this.#promptContext, {
      guidance,
      ...(kind === 'end' ? { closingReason: 'end_session' } : {}),
      orientation: this.#orientation,
    });
  }

  /** Guidance not yet sent in this session; a source that fails costs the session nothing. */
  async #newGuidance(): Promise<OperatorGuidance[]> {
    const source = this.#options.guidance;
    if (source === undefined) return [];
    try {
      return (await source.pending()).filter((entry) => !this.#guidanceSent.has(entry.id));
    } catch {
      return [];
    }
  }

  async #guidanceQueued(entries: readonly OperatorGuidance[], inFirstMessage: boolean) {
    if (entries.length === 0) return;
    for (const entry of entries) this.#guidanceSent.add(entry.id);
    this.#guidanceUnanswered.push(...entries.map((entry) => entry.id));
    await this.#emit({
      type: 'guidance-delivered',
      guidanceIds: entries.map((entry) => entry.id),
      turn: this.turns + 1,
      inFirstMessage,
    });
  }

  /** A response arrived: the guidance its request carried is acknowledged. */
  async #guidanceAnswered(): Promise<void> {
    const source = this.#options.guidance;
    if (source === undefined || this.#guidanceUnanswered.length === 0) return;
    const ids = this.#guidanceUnanswered;
    this.#guidanceUnanswered = [];
    try {
      await source.acknowledge(ids, { sessionId: this.#sessionId, turn: this.turns });
    } catch {
      // Unacknowledged guidance is repeated in the next session's first message: nothing lost.
    }
  }

  /**
   * Memory upkeep before the first request: older progress entries move to the archive, the
   * checklist is kept one feature per line, and the orientation is built from the result.
   * Upkeep never stops a session: a store that refuses it leaves the memory as it was.
   */
  async #prepareMemory(): Promise<void> {
    const options = this.#options;
    if (options.kind === 'init') return;
    const store = options.store;
    try {
      const rollover = await rollOverProgressLog(store, {
        ...options.progressLog,
        session: this.#sessionId,
      });
      for (const change of rollover?.changes ?? []) {
        await this.#emit({ type: 'memory-change', change });
      }
      if (await normalizeFeaturesLayout(store, { session: this.#sessionId })) {
        await this.#emit({
          type: 'memory-change',
          change: {
            command: 'str_replace',
            path: '/memories/features.json',
            bytes: Buffer.byteLength((await store.read('features.json')) ?? ''),
            at: Date.now(),
            session: this.#sessionId,
          },
        });
      }
    } catch {
      // The session still runs on the memory as it is; the next session tries again.
    }
    if (options.orientation === false) return;
    const previous = options.verification === false ? undefined : options.verification?.previous;
    const regressed = Object.values(previous ?? {})
      .filter((state) => state.status === 'regressed' && state.evidence !== null)
      .map((state) => state.evidence)
      .filter((evidence) => evidence !== null);
    this.#orientation = await buildOrientation(store, {
      ...options.orientation,
      ...(options.lastCheckpoint === undefined ? {} : { lastCheckpoint: options.lastCheckpoint }),
      regressed,
    }).catch(() => '');
  }

  /** A session that added no progress entry gets one from Baton, so the log has no hole. */
  async #closeProgressGap(
    result: SessionResult,
    entriesBefore: number,
  ): Promise<SessionResult['progressEntry']> {
    const entriesAfter = await readProgressEntries(this.#options.store).catch(() => null);
    if (entriesAfter === null) return 'none';
    if (entriesAfter.length > entriesBefore) {
      const full = result.contextFull;
      if (full !== undefined) {
        // The agent's entry says what it did; Baton's line says why the session ended there.
        const change = await appendContextFullLine(this.#options.store, {
          turn: full.turn,
          sessionNumber: this.#sessionNumber,
          sessionId: this.#sessionId,
        }).catch(() => null);
        if (change !== null) await this.#emit({ type: 'memory-change', change });
      }
      return 'agent';
    }
    const change = await fillProgressGap(this.#options.store, {
      sessionNumber: this.#sessionNumber,
      sessionId: this.#sessionId,
      kind: this.#options.kind,
      result,
      toolCalls: this.#toolCalls,
    }).catch(() => null);
    if (change === null) return 'none';
    await this.#emit({ type: 'memory-change', change });
    return 'baton';
  }

  #workMaxTurns(): number {
    return this.#options.kind === 'end'
      ? (this.#options.endOfSessionMaxTurns ?? DEFAULT_END_MAX_TURNS)
      : Number.POSITIVE_INFINITY;
  }

  /** The end-of-session phase: the agent updates its progress log before the session stops. */
  async #closeLog(verdict: StopVerdict): Promise<string> {
    const endReason = verdict.endReason ?? 'done';
    const fresh = verdict.freshEndContext === true;
    if (fresh) {
      this.#freshEndOfSession(endReason);
    } else {
      this.conversation.addText(renderEndOfSessionPrompt(endReason, this.#promptContext), {
        source: 'prompt',
      });
    }
    const grace = new AbortController();
    const graceTimer = setTimeout(
      () => grace.abort(),
      this.#options.endOfSessionTimeoutMs ?? DEFAULT_END_TIMEOUT_MS,
    );
    try {
      const stop = await this.#runPhase(
        'end',
        grace.signal,
        this.#options.endOfSessionMaxTurns ?? DEFAULT_END_MAX_TURNS,
        { reason: endReason, fresh },
      );
      return endPhaseNote(stop);
    } finally {
      clearTimeout(graceTimer);
    }
  }

  /**
   * The old conversation is full (the API said so, or the end-of-session turn no longer fits it):
   * the log is closed from a fresh context, the `end` prompt with the orientation, instead.
   */
  #freshEndOfSession(endReason: string): void {
    this.conversation.reset();
    this.#lastPrompt = undefined;
    this.conversation.addText(
      renderSessionPrompt('end', this.#promptContext, {
        closingReason: endReason,
        orientation: this.#orientation,
      }),
      { source: 'prompt' },
    );
  }

  /** The loop: request, record, act on the stop reason, check budgets. */
  async #runPhase(
    name: Phase['name'],
    signal: AbortSignal,
    maxTurns: number,
    end?: Phase['end'],
  ): Promise<PhaseStop> {
    const phase: Phase = {
      name,
      signal,
      maxTurns,
      turns: 0,
      maxTokensInARow: 0,
      nudgedEmpty: false,
      ...(end === undefined ? {} : { end }),
    };
    this.#phase = name;
    for (;;) {
      if (signal.aborted) return { kind: 'aborted' };
      if (phase.turns >= phase.maxTurns) return { kind: 'budget', reason: 'max_turns' };
      const turn = await this.#turn(phase);
      if ('stop' in turn) return turn.stop;
      if ('retry' in turn) continue;
      const stop = await this.#actOn(turn.response, turn.stopReason, phase);
      if (stop !== undefined) return stop;
      if (phase.name === 'work') {
        const hit = this.#budgetHit();
        if (hit !== undefined) return hit;
      }
    }
  }

  /**
   * One request with the guidance that arrived since the last, and its answer recorded and added
   * to the conversation; or why the phase stops when no answer came.
   */
  async #turn(
    phase: Phase,
  ): Promise<
    { response: BetaMessage; stopReason: string } | { stop: PhaseStop } | { retry: true }
  > {
    await this.#sendNewGuidance();
    await this.#transcript.flush(this.turns + 1, phase.name);
    this.conversation.flush();
    const full = await this.#contextWouldOverflow(
      phase.end === undefined ? await this.#endOfSessionReserve() : 0,
    );
    if (full !== undefined) {
      // The end-of-session turn gets one fresh start when the conversation no longer fits.
      if (phase.end === undefined || phase.end.fresh) return { stop: full };
      this.#freshEndOfSession(phase.end.reason);
      phase.end.fresh = true;
      await this.#transcript.flush(this.turns + 1, phase.name);
      this.conversation.flush();
    }
    const started = Date.now();
    let response: BetaMessage;
    try {
      response = await this.#request(phase.signal);
    } catch (error) {
      if (phase.signal.aborted) return { stop: { kind: 'aborted' } };
      const stop = stopForApiError(error, this.turns + 1);
      if (stop.kind === 'context_window' && phase.end !== undefined && !phase.end.fresh) {
        // The API found the closing conversation too long (a window Baton could not count).
        this.#freshEndOfSession(phase.end.reason);
        phase.end.fresh = true;
        return { retry: true };
      }
      return { stop };
    }
    this.turns += 1;
    phase.turns += 1;
    this.#lastPrompt = {
      tokens:
        response.usage.input_tokens +
        (response.usage.cache_read_input_tokens ?? 0) +
        (response.usage.cache_creation_input_tokens ?? 0),
      estimate: this.#sentEstimate,
    };
    await this.#guidanceAnswered();
    const stopReason = response.stop_reason ?? 'end_turn';
    const appliedEdits = await this.#recordTurn(response, phase, stopReason, Date.now() - started);
    // With caching, keep what the server cleared cleared, so the next requests read the
    // cleared prompt from the cache instead of sliding the clearing window (and rewriting the
    // cache from there) every turn.
    if (this.#context.promptCache !== null) {
      this.conversation.replaceHistory(
        mirrorAppliedEdits(this.conversation.messages, this.#context, appliedEdits),
      );
    }
    if (this.#retryCutToolCall(response, stopReason)) return { retry: true };
    this.conversation.addAssistant(response.content);
    phase.maxTokensInARow = stopReason === 'max_tokens' ? phase.maxTokensInARow + 1 : 0;
    return { response, stopReason };
  }

  /**
   * The context counter: the next request's input is the last request's, as the API counted it,
   * plus what was added since (the reply and the new user turn, by Baton's estimate). When that
   * and `max_tokens` no longer fit the model's window, the request is not sent: the context is
   * full and the session hands off. Unknown window or first request: nothing to count.
   */
  async #contextWouldOverflow(reserve: number): Promise<PhaseStop | undefined> {
    const last = this.#lastPrompt;
    if (last === undefined) return undefined;
    const window = await this.#contextWindowOf(this.#model);
    if (window === null) return undefined;
    const next = last.tokens + Math.max(0, this.#estimateRequest() - last.estimate);
    if (next + this.#maxTokens + reserve <= window) return undefined;
    return {
      kind: 'context_window',
      turn: this.turns + 1,
      cause: 'counter',
      promptTokens: next,
      contextWindow: window,
    };
  }

  /**
   * Room the working phase keeps for the end-of-session turn, so that the agent can still close
   * its log in the same conversation when the work stops: the closing prompt (by
   * `estimateInputTokens`) and `END_OF_SESSION_REPLY_ROOM` for the last working reply. Its own
   * reply has the `max_tokens` every request reserves.
   */
  async #endOfSessionReserve(): Promise<number> {
    this.#closingTokens ??= estimateInputTokens({
      system: '',
      tools: [],
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: renderEndOfSessionPrompt('max_output_tokens', this.#promptContext),
            },
          ],
        },
      ],
    });
    return this.#closingTokens + END_OF_SESSION_REPLY_ROOM;
  }

  /** Baton's estimate of the next request's input tokens (`estimateInputTokens`). */
  #estimateRequest(): number {
    return estimateInputTokens({
      system: this.#system,
      tools: this.toolbox.definitions,
      messages: this.conversation.messages,
    });
  }

  /** The context window of `model`, asked once; null when neither the option nor the API says. */
  #contextWindowOf(model: string): Promise<number | null> {
    const known = this.#contextWindows.get(model);
    if (known !== undefined) return known;
    const asked =
      this.#options.contextWindow !== undefined
        ? Promise.resolve(this.#options.contextWindow)
        : this.#options.client.models
            .retrieve(model, {}, { maxRetries: 1, timeout: 30_000 })
            .then((info) => info.max_input_tokens ?? null)
            .catch(() => null);
    this.#contextWindows.set(model, asked);
    return asked;
  }

  /**
   * A tool call cut by max_tokens is never run: the reply is dropped and the same request goes
   * again with twice the output room, up to `MAX_TOKENS_CEILING`. False when there is no more
   * room to give (the model is then told to split the call).
   */
  #retryCutToolCall(response: BetaMessage, stopReason: string): boolean {
    if (stopReason !== 'max_tokens' || !response.content.some(isToolUse)) return false;
    const ceiling = Math.max(this.#options.maxTokens ?? DEFAULT_MAX_TOKENS, MAX_TOKENS_CEILING);
    if (this.#maxTokens >= ceiling) return false;
    this.#maxTokens = Math.min(ceiling, this.#maxTokens * 2);
    return true;
  }

  /** Guidance sent while the previous request was in flight goes with the next one. */
  async #sendNewGuidance(): Promise<void> {
    const guidance = await this.#newGuidance();
    if (guidance.length === 0) return;
    this.conversation.addText(renderGuidance(guidance), {
      source: 'guidance',
      guidanceIds: guidance.map((entry) => entry.id),
    });
    await this.#guidanceQueued(guidance, false);
  }

  /** The step `ON_STOP_REASON` names for the answer's stop reason; anything else ends the phase. */
  async #actOn(
    response: BetaMessage,
    stopReason: string,
    phase: Phase,
  ): Promise<PhaseStop | undefined> {
    if (response.content.length === 0 && stopReason === 'end_turn') {
      // Models sometimes answer tool results with nothing at all: that is not the end of the
      // work. Ask once to continue (the empty reply itself is never sent back).
      const nudge = !phase.nudgedEmpty;
      await this.#emit({ type: 'empty-reply', turn: this.turns, nudged: nudge });
      if (nudge) {
        phase.nudgedEmpty = true;
        this.conversation.addText(EMPTY_REPLY_NUDGE, { source: 'note' });
        return undefined;
      }
    }
    if (response.content.length > 0) phase.nudgedEmpty = false;
    const step = ON_STOP_REASON[stopReason];
    if (step === undefined) return { kind: 'end_turn' };
    const stop = await step(this, response.content.filter(isToolUse), phase);
    // The turn's tool results are kept now, before the next request is even built.
    await this.#transcript.flush(this.turns + 1, phase.name);
    return stop;
  }

  /** The request of the next turn, as the API takes it, with its cache breakpoints placed. */
  #buildRequest(): MessageCreateParamsNonStreaming {
    const context = this.#context;
    const { breakpoints: _placed, ...cached } = withCacheBreakpoints(
      {
        system: this.#system,
        tools: this.toolbox.definitions,
        messages: [...this.conversation.messages],
      },
      context.promptCache,
    );
    return {
      model: this.#model,
      max_tokens: this.#maxTokens,
      ...cached,
      ...(context.betas.length > 0 ? { betas: context.betas } : {}),
      ...(context.context_management === undefined
        ? {}
        : { context_management: context.context_management }),
    };
  }

  /**
   * One API call with our own retries; when the model is still overloaded after them and a
   * fallback model is set, the call (and the rest of the session) goes to the fallback model.
   */
  async #request(signal: AbortSignal): Promise<BetaMessage> {
    try {
      return await this.#requestWithRetries(signal);
    } catch (error) {
      const fallback = this.#options.fallbackModel;
      if (fallback === undefined || this.#fallback !== undefined || signal.aborted) throw error;
      if (fallback === this.#model || !isOverloaded(error)) throw error;
      this.#fallback = { from: this.#model, to: fallback, turn: this.turns + 1, at: Date.now() };
      const status = classifyFailure(error).status;
      await this.#emit({
        type: 'model-fallback',
        from: this.#model,
        to: fallback,
        turn: this.turns + 1,
        message: redactThenCut(errorMessage(error), 200),
        ...(status === undefined ? {} : { status }),
      });
      this.#model = fallback;
      return this.#requestWithRetries(signal);
    }
  }

  /** One API call with our own retry loop, which reports every retry as an `api-retry` event. */
  #requestWithRetries(signal: AbortSignal): Promise<BetaMessage> {
    const params = this.#buildRequest();
    this.#sentEstimate = this.#estimateRequest();
    const requestOptions = { signal, maxRetries: 0 };
    const client = this.#options.client;
    return withRetries(
      (): Promise<BetaMessage> =>
        this.#streams()
          ? client.beta.messages.stream(params, requestOptions).finalMessage()
          : client.beta.messages.create(params, requestOptions),
      {
        ...(this.#options.retry === undefined ? {} : { retry: this.#options.retry }),
        signal,
        onRetry: (notice) =>
          this.#emit({
            type: 'api-retry',
            attempt: notice.attempt,
            delayMs: notice.delayMs,
            message: redactThenCut(errorMessage(notice.error), 200),
            ...(notice.status === undefined ? {} : { status: notice.status }),
          }),
      },
    );
  }

  async #recordTurn(
    response: BetaMessage,
    phase: Phase,
    stopReason: string,
    durationMs: number,
  ): Promise<TurnAccounting['appliedEdits']> {
    const accounting = this.#accumulator.recordTurn(response, this.#model);
    await this.#transcript.response(response.content, {
      turn: this.turns,
      phase: phase.name,
      stopReason,
      model: this.#model,
      usage: accounting.usage,
      costUsd: accounting.costUsd,
      durationMs,
      appliedEdits: accounting.appliedEdits,
      clearedInputTokens: accounting.clearedInputTokens,
    });
    await this.#emit({
      type: 'turn',
      turn: this.turns,
      model: this.#model,
      responseModel: response.model,
      responseId: response.id,
      phase: phase.name,
      stopReason,
      durationMs,
      usage: accounting.usage,
      appliedEdits: accounting.appliedEdits,
      clearedInputTokens: accounting.clearedInputTokens,
      costUsd: accounting.costUsd,
      cacheInvalidation: accounting.cacheInvalidation,
      totals: this.#accumulator.totals(),
    });
    return accounting.appliedEdits;
  }

  #budgetHit(): PhaseStop | undefined {
    const budgets = this.#budgets;
    const totals = this.#accumulator.totals();
    const input = totalInputTokens(totals);
    if (budgets.maxTurns !== undefined && this.turns >= budgets.maxTurns)
      return { kind: 'budget', reason: 'max_turns' };
    if (budgets.maxInputTokens !== undefined && input >= budgets.maxInputTokens)
      return { kind: 'budget', reason: 'max_input_tokens' };
    if (budgets.maxOutputTokens !== undefined && totals.outputTokens >= budgets.maxOutputTokens)
      return { kind: 'budget', reason: 'max_output_tokens' };
    if (budgets.maxUsd !== undefined && totals.costUsd >= budgets.maxUsd)
      return { kind: 'budget', reason: 'max_usd' };
    return undefined;
  }

  async #result(
    verdict: StopVerdict,
    featuresBefore: Feature[] | null,
    startedAt: number,
  ): Promise<SessionResult> {
    const featuresAfter = await readFeatures(this.#options.store);
    return {
      sessionId: this.#sessionId,
      kind: this.#options.kind,
      outcome: verdict.outcome,
      reason: verdict.reason,
      stopReason: verdict.stopReason,
      turns: this.turns,
      usage: this.#accumulator.totals(),
      featuresBefore: countFeatures(featuresBefore),
      featuresAfter: countFeatures(featuresAfter),
      allFeaturesPass: allFeaturesPass(featuresAfter),
      flippedFeatures: flippedFeatureIds(featuresBefore, featuresAfter),
      startedAt,
      endedAt: Date.now(),
      commits: [],
      progressEntry: 'agent',
      ...(verdict.error === undefined ? {} : { error: verdict.error }),
      ...(this.#fallback === undefined ? {} : { fallback: this.#fallback }),
      contextFull:
        verdict.contextFullAt === undefined
          ? undefined
          : {
              turn: verdict.contextFullAt,
              useful:
                flippedFeatureIds(featuresBefore, featuresAfter).length > 0 ||
                (this.#checkpointer?.commits.length ?? 0) > 0,
            },
    };
  }

  /**
   * The end-of-session re-run of passing features' checks on the final commit: a failing one is
   * flipped back (regressed). The result then carries the project's check record and counts.
   */
  async #verifyAtEnd(result: SessionResult): Promise<void> {
    const verifier = this.#verifier;
    if (verifier === undefined) return;
    try {
      const commit =
        result.checkpoint?.head ??
        this.#checkpointer?.last?.head ??
        this.#options.lastCheckpoint ??
        null;
      const store = this.#options.store;
      const pass =
        this.#options.kind === 'end' || result.outcome === 'cancelled'
          ? { ran: 0, regressed: [], durationMs: 0, changes: [] }
          : await verifier.regressionPass(store, commit);
      for (const change of pass.changes) await this.#emit({ type: 'memory-change', change });
      const features = await readFeatures(store);
      result.featuresAfter = countFeatures(features);
      result.allFeaturesPass = allFeaturesPass(features);
      result.checks = { ...verifier.checks };
      result.verification = {
        ...countVerification(features, verifier.checks),
        pending: pendingChecks(
          features,
          verifier.checks,
          commit,
          verifier.defaultCheck,
          this.#sessionId,
        ).length,
        regressedIds: pass.regressed,
        rerun: pass.ran,
        rerunMs: pass.durationMs,
      };
      if (pass.regressed.length > 0) {
        result.reason += ` Regressed (check failed on re-run, set back to failing): ${pass.regressed.join(', ')}.`;
      }
    } finally {
      await verifier.dispose();
    }
  }

  /** The end-of-session checkpoint; a checkpoint that could not be saved is noted, not thrown. */
  async #finalCheckpoint(result: SessionResult): Promise<void> {
    const checkpointer = this.#checkpointer;
    if (checkpointer === undefined) return;
    const checkpoint = await checkpointer.save('end', {
      subject:
        result.flippedFeatures.length > 0
          ? `flipped ${result.flippedFeatures.join(', ')}`
          : 'no feature flipped',
      trailers: [
        ['Outcome', `${result.outcome} (${result.stopReason ?? ''})`],
        ['Features', `${result.featuresAfter.passing}/${result.featuresAfter.total} passing`],
      ],
    });
    result.commits = [...checkpointer.commits];
    if (checkpointer.failures > 0) result.checkpointFailures = checkpointer.failures;
    if (checkpoint === undefined) {
      result.reason += ' The workspace checkpoint failed.';
      result.checkpointError = checkpointer.failure ?? 'the checkpoint failed';
      return;
    }
    // The summary's hooks are the session's: a refusal mid-session is not hidden by an end
    // checkpoint that had nothing left to commit.
    result.checkpoint = { ...checkpoint, hooks: checkpointer.hooks };
    if (checkpoint.pushError?.code === 'push_rejected' && result.outcome !== 'failed') {
      result.outcome = 'failed';
      result.stopReason = 'push_rejected';
      result.error = checkpoint.pushError.message;
      result.reason = `The checkpoint push was rejected: ${checkpoint.pushError.message}`;
    } else if (!checkpoint.pushed && checkpoint.head !== null) {
      result.reason += ` The last checkpoint was not pushed: ${checkpoint.pushError?.message ?? 'unknown reason'}`;
    }
  }
}
