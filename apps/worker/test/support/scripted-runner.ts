import { emptyUsageTotals } from '@baton/context-config';
import type { MemoryStore } from '@baton/core';
import type { Checkpoint } from '@baton/workspace';
import type { SessionRunner, WorkerSessionResult } from '../../src/index.js';

/**
 * A real session runner without a model: it follows the memory protocol against the real store
 * (init writes features.json from the goal's bullets, each resume flips one feature), emits the
 * session events and honours the AbortSignal. Used where the model is beside the point.
 */
export function createScriptedRunner(
  options: {
    /** Called at the start of every session (tests use it to hold a session open). */
    onStart?: (info: {
      projectId: string;
      sessionNumber: number;
      signal: AbortSignal;
      /** The session's memory, as the model's writes would reach it. */
      store: MemoryStore;
      /** The session's working tree (the agent's files). */
      workspace: string;
      /** A checkpoint of the working tree, as the session makes one after a turn. */
      checkpoint: (subject: string) => Promise<Checkpoint | undefined>;
    }) => Promise<void> | void;
    /** Fail sessions with this error. */
    failWith?: string;
    costUsd?: number;
  } = {},
): SessionRunner {
  return async (session) => {
    const startedAt = Date.now();
    const sessionId = session.sessionId ?? 'unknown';
    const base = { v: 1 as const, projectId: session.project.id, sessionId };
    await session.onEvent?.({
      ...base,
      type: 'session-start',
      at: Date.now(),
      kind: session.kind,
      sessionNumber: session.sessionNumber ?? 1,
      interrupted: session.interrupted ?? false,
      model: session.model,
      sandbox: { mode: 'off', reason: 'simulator', notice: 'the scripted runner runs no command' },
    } as never);
    const before = await counts(session.store);
    let outcome: WorkerSessionResult['outcome'] = 'completed';
    let reason = 'end_turn';
    let error: string | undefined;
    const flipped: string[] = [];
    try {
      await options.onStart?.({
        projectId: session.project.id,
        sessionNumber: session.sessionNumber ?? 1,
        signal: session.signal ?? new AbortController().signal,
        store: session.store,
        workspace: session.workspace,
        checkpoint: async (subject) => {
          const checkpoint = await session.checkpoints?.target.checkpoint({ subject });
          if (checkpoint !== undefined) {
            await session.onEvent?.({
              ...base,
              type: 'checkpoint',
              at: Date.now(),
              reason: 'turn',
              commit: checkpoint.commit,
              head: checkpoint.head,
              pushed: checkpoint.pushed,
              hooks: checkpoint.hooks,
              skipped: checkpoint.skipped,
              error: checkpoint.pushError?.message,
              replacedStale: checkpoint.replacedStale,
            });
          }
          return checkpoint;
        },
      });
      if (options.failWith) throw new Error(options.failWith);
      if (session.signal?.aborted) throw new Error('aborted');
      if (session.kind === 'init') {
        const bullets = session.project.goal
          .split('\n')
          .map((line) => line.trim())
          .filter((line) => line.startsWith('- '))
          .map((line, index) => ({
            id: `F${index + 1}`,
            description: line.slice(2),
            steps: [],
            passes: false,
          }));
        await session.store.write('features.json', JSON.stringify(bullets, null, 2), {
          mode: 'create',
          session: sessionId,
        });
        await session.store.write(
          'progress.md',
          `# Progress\n\nSession ${session.sessionNumber} (init)\n`,
          { mode: 'create', session: sessionId },
        );
      } else {
        const result = await session.store.edit(
          'features.json',
          (current) => {
            const features = JSON.parse(current) as { id: string; passes: boolean }[];
            const next = features.find((feature) => !feature.passes);
            if (next) {
              next.passes = true;
              flipped.splice(0, flipped.length, next.id);
            }
            return JSON.stringify(features, null, 2);
          },
          { session: sessionId },
        );
        void result;
        await session.store.edit(
          'progress.md',
          (current) =>
            `${current}Session ${session.sessionNumber}${session.interrupted ? ' (previous session was interrupted)' : ''}: ${flipped.join(',') || 'nothing left'}\n`,
          { session: sessionId },
        );
      }
    } catch (caught) {
      if (session.signal?.aborted) {
        outcome = 'cancelled';
        reason = String(session.signal.reason);
      } else {
        outcome = 'failed';
        reason = 'api_error';
        error = caught instanceof Error ? caught.message : String(caught);
      }
    }
    const after = await counts(session.store);
    const result: WorkerSessionResult = {
      sessionId,
      kind: session.kind,
      outcome,
      reason,
      turns: 1,
      usage: {
        ...emptyUsageTotals(),
        turns: 1,
        inputTokens: 100,
        outputTokens: 10,
        clearedInputTokens: 0,
        costUsd: options.costUsd ?? 0.01,
      },
      featuresBefore: before,
      featuresAfter: after,
      allFeaturesPass: after.total > 0 && after.passing === after.total,
      flippedFeatures: flipped,
      commits: [],
      progressEntry: 'agent',
      startedAt,
      endedAt: Date.now(),
      error,
    };
    await session.onEvent?.({ ...base, type: 'session-end', at: Date.now(), result } as never);
    return result;
  };
}

async function counts(store: MemoryStore): Promise<{ passing: number; total: number }> {
  const text = await store.read('features.json');
  if (text === null) return { passing: 0, total: 0 };
  const features = JSON.parse(text) as { passes: boolean }[];
  return { passing: features.filter((feature) => feature.passes).length, total: features.length };
}
