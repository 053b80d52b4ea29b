import { emptyUsageTotals, type TurnUsage } from '@baton/context-config';
import type { ProjectRepository, SessionSummary, StreamEvent } from '@baton/projects';

/**
 * A `turn` event in the shape the session writes it (migrations upgrade older ones; readers
 * assume this one), with `usage` over zeros and every cache write a 5-minute one.
 */
export function seedTurn(
  projectId: string,
  sessionId: string,
  turn: number,
  usage: Partial<TurnUsage> & { inputTokens: number },
): StreamEvent {
  const counts = {
    outputTokens: 1,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    ...usage,
  };
  return {
    v: 1,
    type: 'turn',
    at: Date.now(),
    projectId,
    sessionId,
    turn,
    model: 'sim',
    responseModel: 'sim',
    responseId: `msg_${turn}`,
    phase: 'work',
    stopReason: 'tool_use',
    durationMs: 1,
    usage: {
      ...counts,
      cacheWrite5mInputTokens: counts.cacheCreationInputTokens,
      cacheWrite1hInputTokens: 0,
    },
    appliedEdits: [],
    clearedInputTokens: 0,
    cacheInvalidation: null,
    costUsd: 0,
    totals: { ...emptyUsageTotals(), turns: turn },
  };
}

/** A `session-end` event in the shape the session writes it, with the features after it. */
export function seedSessionEnd(
  projectId: string,
  sessionId: string,
  featuresAfter: { passing: number; total: number },
): StreamEvent {
  const at = Date.now();
  return {
    v: 1,
    type: 'session-end',
    at,
    projectId,
    sessionId,
    result: {
      sessionId,
      kind: 'resume',
      outcome: 'completed',
      reason: 'end_turn',
      turns: 1,
      usage: emptyUsageTotals(),
      featuresBefore: featuresAfter,
      featuresAfter,
      allFeaturesPass: featuresAfter.passing === featuresAfter.total,
      flippedFeatures: [],
      startedAt: at,
      endedAt: at,
      commits: [],
      progressEntry: 'agent',
    },
  };
}

/** What a session emits, written to the project's stream the way the worker publishes it. */
export async function seedSession(
  repository: ProjectRepository,
  projectId: string,
  options: {
    sessionId: string;
    sessionNumber: number;
    kind?: 'init' | 'resume';
    /** Input tokens per turn; a turn with `cleared` also carries an applied clear_tool_uses edit. */
    /** `input` is uncached; `cacheRead`/`cacheWrite` default to 0. */
    turns: { input: number; cleared?: number; cacheRead?: number; cacheWrite?: number }[];
    flipped?: string[];
    features?: { before: [number, number]; after: [number, number] };
  },
): Promise<string[]> {
  const ids: string[] = [];
  const append = (event: Omit<StreamEvent, 'projectId' | 'v'>) =>
    repository.appendEvent(projectId, { v: 1, projectId, ...event } as StreamEvent);
  const at = Date.now();
  const base = { sessionId: options.sessionId };
  ids.push(
    await append({
      ...base,
      type: 'session-start',
      at,
      kind: options.kind ?? 'resume',
      sessionNumber: options.sessionNumber,
      interrupted: false,
      model: 'sim',
      sandbox: { mode: 'off', reason: 'simulator', notice: 'commands run on the host' },
    }),
  );
  let turn = 0;
  for (const spec of options.turns) {
    turn++;
    ids.push(
      await repository.appendEvent(projectId, {
        ...seedTurn(projectId, options.sessionId, turn, {
          inputTokens: spec.input,
          cacheReadInputTokens: spec.cacheRead ?? 0,
          cacheCreationInputTokens: spec.cacheWrite ?? 0,
          outputTokens: 50,
        }),
        at: at + turn,
        durationMs: 12,
        appliedEdits:
          spec.cleared === undefined
            ? []
            : [
                {
                  type: 'clear_tool_uses_20250919',
                  cleared_tool_uses: 2,
                  cleared_input_tokens: spec.cleared,
                },
              ],
        clearedInputTokens: spec.cleared ?? 0,
        costUsd: 0.001,
      } as StreamEvent),
    );
    ids.push(
      await append({
        ...base,
        type: 'tool-call',
        at: at + turn,
        turn,
        tool: 'memory',
        summary: 'view /memories',
        isError: false,
        durationMs: 2,
      }),
    );
  }
  const [beforePassing, beforeTotal] = options.features?.before ?? [0, 2];
  const [afterPassing, afterTotal] = options.features?.after ?? [0, 2];
  const summary: SessionSummary = {
    sessionId: options.sessionId,
    sessionNumber: options.sessionNumber,
    kind: options.kind ?? 'resume',
    outcome: 'completed',
    reason: 'end_turn',
    interrupted: false,
    turns: options.turns.length,
    inputTokens: options.turns.reduce((sum, spec) => sum + spec.input, 0),
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 50 * options.turns.length,
    clearedInputTokens: options.turns.reduce((sum, spec) => sum + (spec.cleared ?? 0), 0),
    costUsd: 0.001 * options.turns.length,
    featuresBefore: { passing: beforePassing, total: beforeTotal },
    featuresAfter: { passing: afterPassing, total: afterTotal },
    flippedFeatures: options.flipped ?? [],
    startedAt: at,
    endedAt: at + 1_000,
    jobId: `job-${options.sessionNumber}`,
    workerId: 'test',
    model: 'sim-sonnet',
    commits: [],
  };
  await repository.recordSessionEnd(projectId, summary, { failed: false });
  return ids;
}
