import type { ProjectRepository, SessionSummary, StreamEvent } from '@baton/projects';

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
    }),
  );
  let turn = 0;
  for (const spec of options.turns) {
    turn++;
    ids.push(
      await append({
        ...base,
        type: 'turn',
        at: at + turn,
        turn,
        stopReason: 'tool_use',
        durationMs: 12,
        usage: {
          inputTokens: spec.input,
          cacheReadInputTokens: spec.cacheRead ?? 0,
          cacheCreationInputTokens: spec.cacheWrite ?? 0,
          outputTokens: 50,
        },
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
      }),
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
  };
  await repository.recordSessionEnd(projectId, summary, { failed: false });
  return ids;
}
