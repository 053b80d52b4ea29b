import type {
  BetaMessage,
  BetaToolUseBlock,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import {
  type TurnAccounting,
  type UsageAccumulator,
  estimateInputTokens,
  mirrorAppliedEdits,
  totalInputTokens,
} from '@baton/context-config';
import { type PromptContext, renderSessionPrompt } from '../prompts.js';
import type { RunSessionOptions, SessionBudgets } from '../types.js';
import type { ContextCounter } from './context-counter.js';
import type { Conversation } from './conversation.js';
import type { EventBody } from './events.js';
import type { GuidanceDelivery } from './guidance-delivery.js';
import { type ModelClient, type Prompt, isToolUse, stopForApiError } from './model-client.js';
import type { PhaseStop } from './phase-stop.js';
import type { Toolbox } from './toolbox.js';
import type { TranscriptRecorder } from './transcript-recorder.js';

const CUT_TOOL_CALL =
  'Not run: your response hit the max_tokens limit, so this tool call may be incomplete. Send it again, shorter.';
const EMPTY_REPLY_NUDGE = 'Your reply was empty. Please continue with the task.';
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
  end?: { reason: string; fresh: boolean } | undefined;
}

/** What one answered turn asks the loop to do: go on, or stop the phase. */
type StopReasonStep = (
  loop: AgentLoop,
  toolUses: BetaToolUseBlock[],
  phase: Phase,
) => Promise<PhaseStop | undefined> | PhaseStop | undefined;

/** From a response's `stop_reason` to the next step; anything else ends the phase. */
const ON_STOP_REASON: Readonly<Record<string, StopReasonStep>> = {
  tool_use: async (loop, toolUses, phase) => {
    loop.conversation.add(...(await loop.toolbox.run(toolUses, loop.turns, phase.signal)));
    loop.addCheckpointNotes();
    return undefined;
  },
  // The server paused a long turn (or compacted): send the conversation back to continue.
  pause_turn: () => undefined,
  compaction: () => undefined,
  max_tokens: (loop, toolUses, phase) => {
    // A cut tool call has incomplete input: it is never run. It got here after a retry with
    // more room cut it again, so the model is told to make it smaller.
    for (const block of toolUses) {
      loop.conversation.add({
        type: 'tool_result',
        tool_use_id: block.id,
        is_error: true,
        content: `${CUT_TOOL_CALL} It was cut at ${loop.outputRoom} tokens even with more room: split it into smaller steps (for example, write a large file in several edits).`,
      });
    }
    if (phase.maxTokensInARow >= loop.maxConsecutiveMaxTokens) return { kind: 'max_tokens' };
    loop.conversation.addText(CONTINUE_AFTER_CUT, { source: 'note' });
    return undefined;
  },
  refusal: () => ({ kind: 'refusal' }),
  model_context_window_exceeded: (loop) => ({
    kind: 'context_window',
    turn: loop.turns,
    cause: 'stop_reason',
    promptTokens: null,
    contextWindow: null,
  }),
};

/** What the loop works with; the runner makes them. */
export interface AgentLoopOptions {
  conversation: Conversation;
  toolbox: Toolbox;
  model: ModelClient;
  counter: ContextCounter;
  guidance: GuidanceDelivery;
  transcript: TranscriptRecorder;
  accumulator: UsageAccumulator;
  emit: (body: EventBody) => Promise<void>;
  budgets: SessionBudgets;
  context: NonNullable<RunSessionOptions['context']>;
  system: string;
  /** `max_tokens` stops in a row that end a phase. */
  maxConsecutiveMaxTokens: number;
  promptContext: PromptContext;
  /** The orientation a fresh end-of-session context starts with (built before the first turn). */
  orientation: () => string;
  /** What the checkpoints of the last tool calls have to tell the model (hook refusals). */
  checkpointNotes: () => readonly string[];
}

/**
 * The agent loop of one session: each phase (working, then closing the progress log) sends
 * requests, records the answers, acts on their stop reason and checks the budgets.
 */
export class AgentLoop {
  readonly conversation: Conversation;
  readonly toolbox: Toolbox;
  readonly maxConsecutiveMaxTokens: number;
  readonly #options: AgentLoopOptions;
  #turns = 0;
  #phase: Phase['name'] = 'work';

  constructor(options: AgentLoopOptions) {
    this.#options = options;
    this.conversation = options.conversation;
    this.toolbox = options.toolbox;
    this.maxConsecutiveMaxTokens = options.maxConsecutiveMaxTokens;
  }

  /** Turns answered in this session, both phases. */
  get turns(): number {
    return this.#turns;
  }

  /** The phase running, or the last one that ran. */
  get phase(): Phase['name'] {
    return this.#phase;
  }

  /** The `max_tokens` requests are sent with now. */
  get outputRoom(): number {
    return this.#options.model.outputRoom;
  }

  /** What the checkpoints of the last tool calls have to tell the model (hook refusals). */
  addCheckpointNotes(): void {
    for (const note of this.#options.checkpointNotes()) {
      this.conversation.addText(note, { source: 'note' });
    }
  }

  /** The loop: request, record, act on the stop reason, check budgets. */
  async runPhase(
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
      end,
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
   * The old conversation is full (the API said so, or the end-of-session turn no longer fits it):
   * the log is closed from a fresh context, the `end` prompt with the orientation, instead.
   */
  freshEndOfSession(endReason: string): void {
    this.conversation.reset();
    this.#options.counter.forget();
    this.conversation.addText(
      renderSessionPrompt('end', this.#options.promptContext, {
        closingReason: endReason,
        orientation: this.#options.orientation(),
      }),
      { source: 'prompt' },
    );
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
    const { model, counter, transcript } = this.#options;
    await this.#options.guidance.sendNew(this.conversation, this.#turns + 1);
    await transcript.flush(this.#turns + 1, phase.name);
    this.conversation.flush();
    const reserve = phase.end === undefined ? counter.endOfSessionReserve() : 0;
    const full = await counter.wouldOverflow({
      model: model.model,
      estimate: () => estimateInputTokens(this.#prompt()),
      maxTokens: model.outputRoom,
      reserve,
      turn: this.#turns + 1,
    });
    if (full !== undefined) {
      // The end-of-session turn gets one fresh start when the conversation no longer fits.
      if (phase.end === undefined || phase.end.fresh) return { stop: full };
      this.freshEndOfSession(phase.end.reason);
      phase.end.fresh = true;
      await transcript.flush(this.#turns + 1, phase.name);
      this.conversation.flush();
    }
    const started = Date.now();
    // Baton's estimate of the request, kept with its answer for the context counter.
    const estimate = estimateInputTokens(this.#prompt());
    let response: BetaMessage;
    try {
      response = await model.request(() => this.#prompt(), phase.signal, this.#turns + 1);
    } catch (error) {
      if (phase.signal.aborted) return { stop: { kind: 'aborted' } };
      const stop = stopForApiError(error, this.#turns + 1);
      if (stop.kind === 'context_window' && phase.end !== undefined && !phase.end.fresh) {
        // The API found the closing conversation too long (a window Baton could not count).
        this.freshEndOfSession(phase.end.reason);
        phase.end.fresh = true;
        return { retry: true };
      }
      return { stop };
    }
    this.#turns += 1;
    phase.turns += 1;
    counter.answered(response.usage, estimate);
    await this.#options.guidance.answered(this.#turns);
    const stopReason = response.stop_reason ?? 'end_turn';
    const appliedEdits = await this.#recordTurn(response, phase, stopReason, Date.now() - started);
    // With caching, keep what the server cleared cleared, so the next requests read the
    // cleared prompt from the cache instead of sliding the clearing window (and rewriting the
    // cache from there) every turn.
    const context = this.#options.context;
    if (context.promptCache !== null) {
      this.conversation.replaceHistory(
        mirrorAppliedEdits(this.conversation.messages, context, appliedEdits),
      );
    }
    if (model.retryCutToolCall(response, stopReason)) return { retry: true };
    this.conversation.addAssistant(response.content);
    phase.maxTokensInARow = stopReason === 'max_tokens' ? phase.maxTokensInARow + 1 : 0;
    return { response, stopReason };
  }

  /** What the next request sends: the system prompt, the tools and the history as it is now. */
  #prompt(): Prompt {
    return {
      system: this.#options.system,
      tools: this.toolbox.definitions,
      messages: this.conversation.messages,
    };
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
      await this.#options.emit({ type: 'empty-reply', turn: this.#turns, nudged: nudge });
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
    await this.#options.transcript.flush(this.#turns + 1, phase.name);
    return stop;
  }

  async #recordTurn(
    response: BetaMessage,
    phase: Phase,
    stopReason: string,
    durationMs: number,
  ): Promise<TurnAccounting['appliedEdits']> {
    const { accumulator, model } = this.#options;
    const accounting = accumulator.recordTurn(response, model.model);
    await this.#options.transcript.response(response.content, {
      turn: this.#turns,
      phase: phase.name,
      stopReason,
      model: model.model,
      usage: accounting.usage,
      costUsd: accounting.costUsd,
      durationMs,
      appliedEdits: accounting.appliedEdits,
      clearedInputTokens: accounting.clearedInputTokens,
    });
    await this.#options.emit({
      type: 'turn',
      turn: this.#turns,
      model: model.model,
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
      totals: accumulator.totals(),
    });
    return accounting.appliedEdits;
  }

  #budgetHit(): PhaseStop | undefined {
    const budgets = this.#options.budgets;
    const totals = this.#options.accumulator.totals();
    const input = totalInputTokens(totals);
    if (budgets.maxTurns !== undefined && this.#turns >= budgets.maxTurns)
      return { kind: 'budget', reason: 'max_turns' };
    if (budgets.maxInputTokens !== undefined && input >= budgets.maxInputTokens)
      return { kind: 'budget', reason: 'max_input_tokens' };
    if (budgets.maxOutputTokens !== undefined && totals.outputTokens >= budgets.maxOutputTokens)
      return { kind: 'budget', reason: 'max_output_tokens' };
    if (budgets.maxUsd !== undefined && totals.costUsd >= budgets.maxUsd)
      return { kind: 'budget', reason: 'max_usd' };
    return undefined;
  }
}
