import { type UsageAccumulator, createUsageAccumulator } from '@baton/context-config';
import { DEFAULT_SANDBOX_SETUP, describeSandbox } from '@baton/workspace';
import { readFeatures, allFeaturesPass, countFeatures, flippedFeatureIds } from '../features.js';
import type { Feature } from '../features.js';
import {
  type PromptContext,
  renderEndOfSessionPrompt,
  renderSessionPrompt,
  renderSystemPrompt,
} from '../prompts.js';
import type { OperatorGuidance } from '../guidance.js';
import { createBashTool } from '../tools/bash.js';
import { SessionSandbox } from './session-sandbox.js';
import { createSessionMemoryTool } from '../tools/memory.js';
import { createTextEditorTool } from '../tools/text-editor.js';
import type { RunSessionOptions, SessionResult } from '../types.js';
import { AgentLoop } from './agent-loop.js';
import { Checkpointer } from './checkpoints.js';
import { ContextCounter } from './context-counter.js';
import { FeatureVerifier } from './feature-verifier.js';
import { Conversation } from './conversation.js';
import { type EventBody, createEmitter } from './events.js';
import { GuidanceDelivery } from './guidance-delivery.js';
import { ModelClient } from './model-client.js';
import { type StopVerdict, endPhaseNote, errorMessage, verdictFor } from './phase-stop.js';
import { SessionMemory } from './session-memory.js';
import { saveFinalCheckpoint, verifyAtEnd } from './session-end.js';
import { type Toolbox, createToolbox } from './toolbox.js';
import { startSessionMcp } from '../mcp/session-mcp.js';
import type { McpSession } from '../mcp/mcp-servers.js';
import { TranscriptRecorder } from './transcript-recorder.js';
import { WorkSignal } from './work-signal.js';

const DEFAULT_END_TIMEOUT_MS = 30_000;
const DEFAULT_END_MAX_TURNS = 8;
const DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS = 3;

/**
 * One session, as a short sequence of named steps: start, the working phase, the verdict, the
 * end-of-session phase, the commit, the result. `runSession` validates its options and runs one.
 * The parts: `AgentLoop` (the phases' turns) over `ModelClient` (requests, retries, fallback),
 * `ContextCounter` and `GuidanceDelivery`; `SessionMemory` (upkeep, the progress gap);
 * `Checkpointer` and `FeatureVerifier` (checkpoints and checks, `session-end.ts` at the end).
 */
export class SessionRunner {
  readonly #options: RunSessionOptions;
  readonly #sessionId: string;
  readonly #sessionNumber: number;
  readonly #interrupted: boolean;
  readonly #root: string;
  readonly #emit: (body: EventBody) => Promise<void>;
  readonly #promptContext: PromptContext;
  readonly #transcript: TranscriptRecorder;
  readonly #conversation: Conversation;
  readonly #accumulator: UsageAccumulator;
  readonly #memory: SessionMemory;
  readonly #guidance: GuidanceDelivery;
  readonly #model: ModelClient;
  readonly #checkpointer: Checkpointer | undefined;
  readonly #verifier: FeatureVerifier | undefined;
  readonly #toolbox: Toolbox;
  readonly #loop: AgentLoop;
  #work: WorkSignal | undefined;
  #pushRejected: string | undefined;
  #orientation = '';
  /** One line per MCP server (or configuration) that could not be used, for the first message. */
  #mcpNotes: string[] = [];
  #mcp: McpSession | undefined;
  /** The session's one sandbox: bash and stdio MCP servers share its loopback. */
  #sandbox: SessionSandbox | undefined;

  constructor(
    options: RunSessionOptions & { context: NonNullable<RunSessionOptions['context']> },
    root: string,
    sessionId: string,
  ) {
    this.#options = options;
    this.#sessionId = sessionId;
    const transcript = new TranscriptRecorder(options.transcript, sessionId);
    this.#transcript = transcript;
    this.#conversation = new Conversation((blocks, label) => transcript.queued(blocks, label));
    this.#root = root;
    this.#sessionNumber = options.sessionNumber ?? 1;
    this.#interrupted = options.interrupted ?? false;
    this.#accumulator = createUsageAccumulator({ model: options.model });
    const emit = createEmitter(options.onEvent, { projectId: options.project.id, sessionId });
    this.#emit = (body) => {
      if (body.type === 'tool-call') this.#memory.countToolCall(body.tool, body.isError);
      return emit(body);
    };
    this.#memory = new SessionMemory(
      options,
      { id: sessionId, number: this.#sessionNumber },
      this.#emit,
    );
    this.#guidance = new GuidanceDelivery(options.guidance, sessionId, this.#emit);
    this.#promptContext = {
      projectId: options.project.id,
      goal: options.project.goal,
      sessionNumber: this.#sessionNumber,
      interrupted: this.#interrupted,
    };
    this.#model = new ModelClient({
      client: options.client,
      model: options.model,
      fallbackModel: options.fallbackModel,
      maxTokens: options.maxTokens,
      streaming: options.streaming,
      retry: options.retry,
      context: options.context,
      emit: this.#emit,
    });
    this.#checkpointer = this.#createCheckpointer();
    this.#verifier = this.#createVerifier(root);
    this.#toolbox = this.#createToolbox(root);
    this.#loop = new AgentLoop({
      conversation: this.#conversation,
      toolbox: this.#toolbox,
      model: this.#model,
      counter: new ContextCounter({
        client: options.client,
        contextWindow: options.contextWindow,
        promptContext: this.#promptContext,
      }),
      guidance: this.#guidance,
      transcript,
      accumulator: this.#accumulator,
      emit: this.#emit,
      budgets: options.budgets ?? {},
      context: options.context,
      system: renderSystemPrompt(),
      maxConsecutiveMaxTokens:
        options.maxConsecutiveMaxTokens ?? DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS,
      promptContext: this.#promptContext,
      orientation: () => this.#orientation,
      checkpointNotes: () => this.#checkpointer?.takeNotes() ?? [],
    });
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
          quotaEnforcement: options.memoryQuotaEnforcement,
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
          gitDir: options.checkpoints?.target.gitDir,
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

  async run(): Promise<SessionResult> {
    const startedAt = Date.now();
    this.#orientation = await this.#memory.prepare();
    const featuresBefore = await readFeatures(this.#options.store);
    const entriesBefore = await this.#memory.entries();
    await this.#announceStart(startedAt);
    await this.#startMcpServers();
    const work = new WorkSignal(
      this.#options.signal,
      this.#options.budgets?.wallClockMs,
      this.#options.pauseSignal,
    );
    this.#work = work;
    const verdict = await this.#workAndVerdict(work);
    const result = await this.#result(verdict, featuresBefore, startedAt);
    result.progressEntry = await this.#memory.closeProgressGap(result, entriesBefore);
    if (this.#mcp !== undefined) result.mcp = this.#mcp.statuses.map((status) => ({ ...status }));
    if (this.#checkpointer !== undefined) await saveFinalCheckpoint(this.#checkpointer, result);
    if (this.#verifier !== undefined) {
      await verifyAtEnd(this.#verifier, result, {
        store: this.#options.store,
        kind: this.#options.kind,
        sessionId: this.#sessionId,
        commit:
          result.checkpoint?.head ??
          this.#checkpointer?.last?.head ??
          this.#options.lastCheckpoint ??
          null,
        emit: this.#emit,
      });
    }
    result.endedAt = Date.now();
    await this.#transcript.end(this.#loop.turns + 1, this.#loop.phase, {
      endedAt: result.endedAt,
      outcome: result.outcome,
      reason: result.reason,
      stopReason: result.stopReason,
      turns: result.turns,
      costUsd: result.usage.costUsd,
      fallback: result.fallback,
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
    if (session !== undefined) this.#toolbox.add(session.tools, () => session.dispose());
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
      const early = await this.#guidance.pending();
      this.#conversation.addText(this.#firstPrompt(early), {
        source: 'prompt',
        guidanceIds: early.map((entry) => entry.id),
      });
      for (const note of this.#mcpNotes) this.#conversation.addText(note, { source: 'note' });
      await this.#guidance.queued(early, this.#loop.turns + 1, true);
      const stop = await this.#loop.runPhase('work', work.signal, this.#workMaxTurns());
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
        model: this.#model.model,
        abortCause: work.cause,
        pushRejected: this.#pushRejected,
        turns: this.#loop.turns,
        maxConsecutiveMaxTokens: this.#loop.maxConsecutiveMaxTokens,
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
      await this.#toolbox.dispose();
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
      this.#loop.freshEndOfSession(endReason);
    } else {
      this.#conversation.addText(renderEndOfSessionPrompt(endReason, this.#promptContext), {
        source: 'prompt',
      });
    }
    const grace = new AbortController();
    const graceTimer = setTimeout(
      () => grace.abort(),
      this.#options.endOfSessionTimeoutMs ?? DEFAULT_END_TIMEOUT_MS,
    );
    try {
      const stop = await this.#loop.runPhase(
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

  async #result(
    verdict: StopVerdict,
    featuresBefore: Feature[] | null,
    startedAt: number,
  ): Promise<SessionResult> {
    const featuresAfter = await readFeatures(this.#options.store);
    const fallback = this.#model.fallback;
    return {
      sessionId: this.#sessionId,
      kind: this.#options.kind,
      outcome: verdict.outcome,
      reason: verdict.reason,
      stopReason: verdict.stopReason,
      turns: this.#loop.turns,
      usage: this.#accumulator.totals(),
      featuresBefore: countFeatures(featuresBefore),
      featuresAfter: countFeatures(featuresAfter),
      allFeaturesPass: allFeaturesPass(featuresAfter),
      flippedFeatures: flippedFeatureIds(featuresBefore, featuresAfter),
      startedAt,
      endedAt: Date.now(),
      commits: [],
      progressEntry: 'agent',
      error: verdict.error,
      fallback,
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
}
