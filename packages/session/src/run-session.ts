import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import type {
  BetaContentBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaToolResultBlockParam,
  BetaToolUseBlock,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { createUsageAccumulator, defineContextConfig } from '@baton/context-config';
import { SessionError } from './errors.js';
import { allFeaturesPass, countFeatures, flippedFeatureIds, readFeatures } from './features.js';
import { commitWorkspace } from './git.js';
import { createEmitter } from './internal/events.js';
import {
  renderEndOfSessionPrompt,
  renderSessionPrompt,
  renderSystemPrompt,
  type PromptContext,
} from './prompts.js';
import { withRetries } from './retry.js';
import { createBashTool } from './tools/bash.js';
import { createSessionMemoryTool } from './tools/memory.js';
import { createTextEditorTool } from './tools/text-editor.js';
import type { SessionTool } from './tools/types.js';
import type { RunSessionOptions, SessionOutcome, SessionResult } from './types.js';

const DEFAULT_MAX_TOKENS = 4096;

/**
 * The largest `max_tokens` the SDK accepts without streaming: it refuses a non-streaming call
 * whose expected time (60 min x max_tokens / 128,000) exceeds 10 minutes.
 */
export const NON_STREAMING_MAX_TOKENS = 21_333;
const DEFAULT_END_TIMEOUT_MS = 30_000;
const DEFAULT_END_MAX_TURNS = 8;
const DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS = 3;

/** Why a phase of the loop stopped. */
type PhaseStop =
  | { kind: 'end_turn' }
  | { kind: 'budget'; reason: 'max_turns' | 'max_input_tokens' | 'max_output_tokens' | 'max_usd' }
  | { kind: 'aborted' }
  | { kind: 'refusal' }
  | { kind: 'max_tokens' }
  | { kind: 'context_window' }
  | { kind: 'api_error'; error: unknown };

const BUDGET_TEXT: Record<string, string> = {
  max_turns: 'the turn budget',
  max_input_tokens: 'the input-token budget',
  max_output_tokens: 'the output-token budget',
  max_usd: 'the cost budget',
  wall_clock: 'the wall-clock budget',
};

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function isToolUse(block: BetaMessage['content'][number]): block is BetaToolUseBlock {
  return block.type === 'tool_use';
}

async function validate(options: RunSessionOptions): Promise<string> {
  if (!['init', 'resume', 'end'].includes(options.kind)) {
    throw new SessionError(
      'invalid_options',
      `Unknown session kind ${JSON.stringify(options.kind)}: use init, resume or end.`,
    );
  }
  if (options.project.id.trim() === '')
    throw new SessionError('invalid_options', 'The project id is empty.');
  if (options.kind === 'init' && options.project.goal.trim() === '') {
    throw new SessionError('invalid_options', 'An init session needs a non-empty project goal.');
  }
  const streaming: unknown = options.streaming;
  if (streaming !== undefined && typeof streaming !== 'boolean' && streaming !== 'auto') {
    throw new SessionError(
      'invalid_options',
      `streaming must be true, false or 'auto', got ${JSON.stringify(streaming)}.`,
    );
  }
  const info = await stat(options.workspace).catch(() => null);
  if (info === null || !info.isDirectory()) {
    throw new SessionError('workspace', 'The workspace directory does not exist.');
  }
  return realpath(options.workspace);
}

/**
 * Run one agent session of one project: the session prompt, the tool loop on the real SDK client,
 * budgets, cancellation, the end-of-session turn, a git commit of the workspace and events.
 * Never throws for model, API or tool failures (they become the result's outcome); throws
 * `SessionError` only for invalid options.
 */
export async function runSession(options: RunSessionOptions): Promise<SessionResult> {
  const root = await validate(options);
  const sessionId = options.sessionId ?? randomUUID();
  const sessionNumber = options.sessionNumber ?? 1;
  const interrupted = options.interrupted ?? false;
  const context = options.context ?? defineContextConfig({ preset: 'coding' });
  const budgets = options.budgets ?? {};
  const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const streaming =
    options.streaming === true ||
    ((options.streaming ?? 'auto') === 'auto' && maxTokens > NON_STREAMING_MAX_TOKENS);
  const accumulator = createUsageAccumulator({ model: options.model });
  const emit = createEmitter(options.onEvent, { projectId: options.project.id, sessionId });
  const startedAt = Date.now();
  const featuresBefore = await readFeatures(options.store);

  const tools: SessionTool[] = [
    createSessionMemoryTool({
      store: options.store,
      session: sessionId,
      allowFeatureAdditions: options.kind === 'init',
      ...(options.memoryQuotaEnforcement === undefined
        ? {}
        : { quotaEnforcement: options.memoryQuotaEnforcement }),
      onChange: (change) => emit({ type: 'memory-change', change }),
    }),
    createBashTool({ ...options.tools, root }),
    createTextEditorTool({ ...options.tools, root }),
  ];
  const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));
  const promptContext: PromptContext = {
    projectId: options.project.id,
    goal: options.project.goal,
    sessionNumber,
    interrupted,
  };
  const system = renderSystemPrompt(promptContext);

  await emit({
    type: 'session-start',
    kind: options.kind,
    sessionNumber,
    interrupted,
    model: options.model,
  });

  // One controller for the working phase: aborted by the caller's signal or the wall clock.
  const work = new AbortController();
  let abortCause: 'cancelled' | 'wall_clock' | undefined;
  const onCallerAbort = () => {
    abortCause ??= 'cancelled';
    work.abort();
  };
  if (options.signal?.aborted) onCallerAbort();
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const wallTimer =
    budgets.wallClockMs === undefined
      ? undefined
      : setTimeout(() => {
          abortCause ??= 'wall_clock';
          work.abort();
        }, budgets.wallClockMs);

  let messages: BetaMessageParam[] = [];
  let pending: BetaContentBlockParam[] = [];
  let turns = 0;

  const flushPending = () => {
    if (pending.length === 0) return;
    const last = messages[messages.length - 1];
    if (last?.role === 'user') {
      // Two user messages in a row are invalid: an aborted request leaves one behind.
      const existing: BetaContentBlockParam[] =
        typeof last.content === 'string'
          ? [{ type: 'text', text: last.content }]
          : [...last.content];
      messages[messages.length - 1] = { role: 'user', content: [...existing, ...pending] };
    } else {
      messages.push({ role: 'user', content: pending });
    }
    pending = [];
  };

  async function runTool(
    block: BetaToolUseBlock,
    turn: number,
    signal: AbortSignal,
  ): Promise<BetaToolResultBlockParam> {
    const started = Date.now();
    const tool = toolsByName.get(block.name);
    let outcome: { content: string; isError: boolean };
    if (tool === undefined) {
      outcome = {
        content: `Error: unknown tool ${JSON.stringify(block.name)}. Available: memory, bash, str_replace_based_edit_tool.`,
        isError: true,
      };
    } else {
      try {
        outcome = await tool.execute(block.input, signal);
      } catch {
        outcome = { content: 'Error: the tool failed unexpectedly.', isError: true };
      }
    }
    await emit({
      type: 'tool-call',
      turn,
      tool: block.name,
      summary: tool?.summarize(block.input) ?? block.name,
      isError: outcome.isError,
      durationMs: Date.now() - started,
    });
    return {
      type: 'tool_result',
      tool_use_id: block.id,
      content: outcome.content,
      ...(outcome.isError ? { is_error: true } : {}),
    };
  }

  /**
   * Parallel tool calls of one turn: calls in different lanes (memory vs workspace) run
   * concurrently, calls in one lane run in order (a file the model creates is there when its
   * next command runs). Results come back in the order of the tool_use blocks.
   */
  function runTools(
    blocks: BetaToolUseBlock[],
    turn: number,
    signal: AbortSignal,
  ): Promise<BetaToolResultBlockParam[]> {
    const lanes = new Map<string, Promise<unknown>>();
    return Promise.all(
      blocks.map((block) => {
        const lane = toolsByName.get(block.name)?.lane ?? 'other';
        const previous = lanes.get(lane) ?? Promise.resolve();
        const run = previous.then(() => runTool(block, turn, signal));
        lanes.set(
          lane,
          run.catch(() => undefined),
        );
        return run;
      }),
    );
  }

  function budgetHit(): PhaseStop | null {
    const totals = accumulator.totals();
    const input =
      totals.inputTokens + totals.cacheReadInputTokens + totals.cacheCreationInputTokens;
    if (budgets.maxTurns !== undefined && turns >= budgets.maxTurns)
      return { kind: 'budget', reason: 'max_turns' };
    if (budgets.maxInputTokens !== undefined && input >= budgets.maxInputTokens)
      return { kind: 'budget', reason: 'max_input_tokens' };
    if (budgets.maxOutputTokens !== undefined && totals.outputTokens >= budgets.maxOutputTokens)
      return { kind: 'budget', reason: 'max_output_tokens' };
    if (budgets.maxUsd !== undefined && totals.costUsd >= budgets.maxUsd)
      return { kind: 'budget', reason: 'max_usd' };
    return null;
  }

  async function runPhase(
    phase: 'work' | 'end',
    signal: AbortSignal,
    maxPhaseTurns: number,
  ): Promise<PhaseStop> {
    let phaseTurns = 0;
    let maxTokensInARow = 0;
    const maxTokensLimit = options.maxConsecutiveMaxTokens ?? DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS;
    for (;;) {
      if (signal.aborted) return { kind: 'aborted' };
      if (phaseTurns >= maxPhaseTurns) return { kind: 'budget', reason: 'max_turns' };
      flushPending();
      const started = Date.now();
      let response: BetaMessage;
      const params = {
        model: options.model,
        max_tokens: maxTokens,
        system,
        tools: tools.map((tool) => tool.definition),
        messages,
        ...(context.betas.length > 0 ? { betas: context.betas } : {}),
        ...(context.context_management === undefined
          ? {}
          : { context_management: context.context_management }),
      };
      // Our own retry loop (withRetries) reports every retry as an `api-retry` event.
      const requestOptions = { signal, maxRetries: 0 };
      try {
        response = await withRetries(
          (): Promise<BetaMessage> =>
            streaming
              ? options.client.beta.messages.stream(params, requestOptions).finalMessage()
              : options.client.beta.messages.create(params, requestOptions),
          {
            ...(options.retry === undefined ? {} : { retry: options.retry }),
            signal,
            onRetry: (notice) =>
              emit({
                type: 'api-retry',
                attempt: notice.attempt,
                delayMs: notice.delayMs,
                message: errorMessage(notice.error).slice(0, 200),
                ...(notice.status === undefined ? {} : { status: notice.status }),
              }),
          },
        );
      } catch (error) {
        if (signal.aborted) return { kind: 'aborted' };
        return { kind: 'api_error', error };
      }
      turns += 1;
      phaseTurns += 1;
      const accounting = accumulator.recordTurn(response);
      const stopReason = response.stop_reason ?? 'end_turn';
      await emit({
        type: 'turn',
        turn: turns,
        phase,
        stopReason,
        durationMs: Date.now() - started,
        usage: {
          inputTokens: response.usage.input_tokens,
          outputTokens: response.usage.output_tokens,
          cacheReadInputTokens: response.usage.cache_read_input_tokens ?? 0,
          cacheCreationInputTokens: response.usage.cache_creation_input_tokens ?? 0,
        },
        appliedEdits: response.context_management?.applied_edits ?? [],
        clearedInputTokens: accounting.clearedInputTokens,
        costUsd: accounting.costUsd,
        totals: accumulator.totals(),
      });
      // Response blocks are sent back as they came: the API accepts its own output as input.
      if (response.content.length > 0) {
        messages.push({
          role: 'assistant',
          content: response.content as unknown as BetaContentBlockParam[],
        });
      }
      const toolUses = response.content.filter(isToolUse);
      if (stopReason === 'max_tokens') maxTokensInARow += 1;
      else maxTokensInARow = 0;

      switch (stopReason) {
        case 'tool_use':
          pending.push(...(await runTools(toolUses, turns, signal)));
          break;
        case 'pause_turn':
        case 'compaction':
          // The server paused a long turn (or compacted): send the conversation back to continue.
          break;
        case 'max_tokens':
          // A cut tool call may have incomplete input: answer it without running it.
          for (const block of toolUses) {
            pending.push({
              type: 'tool_result',
              tool_use_id: block.id,
              is_error: true,
              content:
                'Not run: your response hit the max_tokens limit, so this tool call may be incomplete. Send it again, shorter.',
            });
          }
          if (maxTokensInARow >= maxTokensLimit) return { kind: 'max_tokens' };
          pending.push({
            type: 'text',
            text: 'Your last response was cut off by the max_tokens limit. Continue where you stopped, in shorter steps.',
          });
          break;
        case 'refusal':
          return { kind: 'refusal' };
        case 'model_context_window_exceeded':
          return { kind: 'context_window' };
        default:
          // end_turn, stop_sequence and anything new: the agent is done with this phase.
          return { kind: 'end_turn' };
      }
      if (phase === 'work') {
        const hit = budgetHit();
        if (hit !== null) return hit;
      }
    }
  }

  let outcome: SessionOutcome = 'completed';
  let stopReason = 'end_turn';
  let reason = 'The agent finished its work for this session.';
  let error: string | undefined;
  let endReason: string | undefined;
  let freshEndContext = false;

  try {
    const firstPrompt =
      options.kind === 'end'
        ? `${renderSessionPrompt('end', promptContext)}\n\n${renderEndOfSessionPrompt('end_session', promptContext)}`
        : renderSessionPrompt(options.kind, promptContext);
    pending.push({ type: 'text', text: firstPrompt });
    const stop = await runPhase(
      'work',
      work.signal,
      options.kind === 'end'
        ? (options.endOfSessionMaxTurns ?? DEFAULT_END_MAX_TURNS)
        : Number.POSITIVE_INFINITY,
    );

    switch (stop.kind) {
      case 'end_turn':
        endReason = 'done';
        break;
      case 'budget':
        outcome = 'budget_exhausted';
        stopReason = stop.reason;
        reason = `Stopped at ${BUDGET_TEXT[stop.reason] ?? stop.reason}.`;
        endReason = stop.reason;
        break;
      case 'aborted':
        if (abortCause === 'wall_clock') {
          outcome = 'budget_exhausted';
          stopReason = 'wall_clock';
          reason = 'Stopped at the wall-clock budget.';
          endReason = 'wall_clock';
        } else {
          outcome = 'cancelled';
          stopReason = 'cancelled';
          reason = 'The session was cancelled.';
          endReason = turns > 0 ? 'cancelled' : undefined;
        }
        break;
      case 'refusal':
        outcome = 'refused';
        stopReason = 'refusal';
        reason = 'The model refused to continue (stop_reason refusal).';
        break;
      case 'max_tokens':
        outcome = 'failed';
        stopReason = 'max_tokens';
        reason = `The model hit max_tokens ${options.maxConsecutiveMaxTokens ?? DEFAULT_MAX_CONSECUTIVE_MAX_TOKENS} times in a row; raise maxTokens.`;
        endReason = 'max_tokens';
        break;
      case 'context_window':
        outcome = 'budget_exhausted';
        stopReason = 'model_context_window_exceeded';
        reason = 'The context window is full (stop_reason model_context_window_exceeded).';
        endReason = 'context_window_exceeded';
        freshEndContext = true;
        break;
      case 'api_error':
        outcome = 'failed';
        stopReason = 'api_error';
        error = errorMessage(stop.error);
        reason = `The API call failed: ${error}`;
        break;
    }

    // The end-of-session turn: the agent updates its progress log before the session stops.
    if (endReason !== undefined && options.kind !== 'end') {
      if (freshEndContext) {
        // The old conversation no longer fits: close the log from a fresh context instead.
        messages = [];
        pending = [
          {
            type: 'text',
            text: `${renderSessionPrompt('end', promptContext)}\n\n${renderEndOfSessionPrompt(endReason, promptContext)}`,
          },
        ];
      } else {
        pending.push({ type: 'text', text: renderEndOfSessionPrompt(endReason, promptContext) });
      }
      const grace = new AbortController();
      const graceTimer = setTimeout(
        () => grace.abort(),
        options.endOfSessionTimeoutMs ?? DEFAULT_END_TIMEOUT_MS,
      );
      try {
        const endStop = await runPhase(
          'end',
          grace.signal,
          options.endOfSessionMaxTurns ?? DEFAULT_END_MAX_TURNS,
        );
        if (endStop.kind === 'aborted') reason += ' The end-of-session turn ran out of time.';
        else if (endStop.kind === 'api_error')
          reason += ` The end-of-session turn failed: ${errorMessage(endStop.error)}`;
        else if (endStop.kind === 'refusal')
          reason += ' The model refused the end-of-session turn.';
      } finally {
        clearTimeout(graceTimer);
      }
    }
  } catch (caught) {
    outcome = 'failed';
    stopReason = 'internal_error';
    error = errorMessage(caught);
    reason = `The session failed unexpectedly: ${error}`;
  } finally {
    if (wallTimer !== undefined) clearTimeout(wallTimer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }

  const featuresAfter = await readFeatures(options.store);
  const flippedFeatures = flippedFeatureIds(featuresBefore, featuresAfter);
  const result: SessionResult = {
    sessionId,
    kind: options.kind,
    outcome,
    reason,
    stopReason,
    turns,
    usage: accumulator.totals(),
    featuresBefore: countFeatures(featuresBefore),
    featuresAfter: countFeatures(featuresAfter),
    allFeaturesPass: allFeaturesPass(featuresAfter),
    flippedFeatures,
    startedAt,
    endedAt: Date.now(),
    ...(error === undefined ? {} : { error }),
  };

  if (options.gitCommit !== false) {
    const flipped =
      flippedFeatures.length > 0 ? `flipped ${flippedFeatures.join(', ')}` : 'no feature flipped';
    const message =
      `baton: session ${sessionNumber} (${options.kind}) of ${options.project.id}: ${flipped}\n\n` +
      `Session-Id: ${sessionId}\nOutcome: ${outcome} (${stopReason})\nFeatures: ${result.featuresAfter.passing}/${result.featuresAfter.total} passing\n`;
    try {
      const commit = await commitWorkspace(root, message);
      if (commit !== undefined) result.commit = commit;
    } catch (caught) {
      result.reason += ` The workspace commit failed: ${errorMessage(caught)}`;
    }
  }
  result.endedAt = Date.now();
  await emit({ type: 'session-end', result });
  return result;
}
