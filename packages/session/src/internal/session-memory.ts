import { normalizeFeaturesLayout } from '../features.js';
import { buildOrientation } from '../orientation.js';
import { readProgressEntries, rollOverProgressLog } from '../progress-log.js';
import type { RunSessionOptions, SessionResult } from '../types.js';
import type { EventBody } from './events.js';
import { appendContextFullLine, fillProgressGap } from './progress-gap.js';

/**
 * Baton's own care of a session's memory: the upkeep before the first request (archive, one
 * feature per line, the orientation), and the progress entry Baton writes when the agent wrote
 * none, from the tool calls it counted.
 */
export class SessionMemory {
  readonly #options: RunSessionOptions;
  readonly #sessionId: string;
  readonly #sessionNumber: number;
  readonly #emit: (body: EventBody) => Promise<void>;
  /** Tool calls by tool name, and how many failed, for the entry Baton writes when the agent wrote none. */
  readonly #toolCalls = new Map<string, { calls: number; failed: number }>();

  constructor(
    options: RunSessionOptions,
    session: { id: string; number: number },
    emit: (body: EventBody) => Promise<void>,
  ) {
    this.#options = options;
    this.#sessionId = session.id;
    this.#sessionNumber = session.number;
    this.#emit = emit;
  }

  countToolCall(tool: string, isError: boolean): void {
    const seen = this.#toolCalls.get(tool) ?? { calls: 0, failed: 0 };
    this.#toolCalls.set(tool, { calls: seen.calls + 1, failed: seen.failed + (isError ? 1 : 0) });
  }

  /**
   * Memory upkeep before the first request: older progress entries move to the archive, the
   * checklist is kept one feature per line, and the orientation is built from the result (it is
   * returned; '' for none). Upkeep never stops a session: a store that refuses it leaves the
   * memory as it was.
   */
  async prepare(): Promise<string> {
    const options = this.#options;
    if (options.kind === 'init') return '';
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
    if (options.orientation === false) return '';
    const previous = options.verification === false ? undefined : options.verification?.previous;
    const regressed = Object.values(previous ?? {})
      .filter((state) => state.status === 'regressed' && state.evidence !== null)
      .map((state) => state.evidence)
      .filter((evidence) => evidence !== null);
    return buildOrientation(store, {
      ...options.orientation,
      lastCheckpoint: options.lastCheckpoint,
      regressed,
    }).catch(() => '');
  }

  /** How many progress entries the log holds now. */
  async entries(): Promise<number> {
    return (await readProgressEntries(this.#options.store)).length;
  }

  /** A session that added no progress entry gets one from Baton, so the log has no hole. */
  async closeProgressGap(
    result: SessionResult,
    entriesBefore: number,
  ): Promise<SessionResult['progressEntry']> {
    const store = this.#options.store;
    const entriesAfter = await readProgressEntries(store).catch(() => null);
    if (entriesAfter === null) return 'none';
    if (entriesAfter.length > entriesBefore) {
      const full = result.contextFull;
      if (full !== undefined) {
        // The agent's entry says what it did; Baton's line says why the session ended there.
        const change = await appendContextFullLine(store, {
          turn: full.turn,
          sessionNumber: this.#sessionNumber,
          sessionId: this.#sessionId,
        }).catch(() => null);
        if (change !== null) await this.#emit({ type: 'memory-change', change });
      }
      return 'agent';
    }
    const change = await fillProgressGap(store, {
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
}
