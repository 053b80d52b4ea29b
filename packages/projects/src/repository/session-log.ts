import type { FeatureChecks, FeatureCheckState } from '@baton/session';
import type { WriteBatch } from '../internal/write-batch.js';
import type { BatonKeys } from '../keys.js';
import type { SessionSummary } from '../project-log.js';
import { decodeSessionSummaryJson } from '../session-summary-decoder.js';
import type { RedisClient } from '@baton/storage-redis';

/** A window of a project's session summaries (`sessionWindow`). */
export interface SessionWindow {
  /** Oldest first. */
  sessions: SessionSummary[];
  /** Index of the first one among the kept summaries: pass it as `beforeIndex` for older ones. */
  startIndex: number;
  /** Summaries kept. */
  total: number;
}

/** The latest session that flipped a feature to passing. */
export interface FeatureFlip {
  sessionNumber: number;
  sessionId: string;
}

/**
 * Each project's finished sessions: a capped list of summaries (oldest first), a hash of the
 * latest session that flipped each feature, so the checklist never reads every summary, and the
 * check record (feature id → its last check run), laid over by each session end.
 */
export class SessionLog {
  readonly #redis: RedisClient;
  readonly #keys: BatonKeys;
  readonly #maxSessions: number;

  constructor(options: { redis: RedisClient; keys: BatonKeys; maxSessions: number }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
    this.#maxSessions = options.maxSessions;
  }

  /** Queues the summary and its feature flips on `batch` (the caller's session-end write). */
  appendIn(batch: WriteBatch, projectId: string, summary: SessionSummary): void {
    const flip = JSON.stringify({
      sessionNumber: summary.sessionNumber,
      sessionId: summary.sessionId,
    } satisfies FeatureFlip);
    for (const id of summary.flippedFeatures)
      batch.hset(this.#keys.featureFlips(projectId), id, flip);
    batch.rpush(this.#keys.sessions(projectId), JSON.stringify(summary));
    batch.ltrim(this.#keys.sessions(projectId), -this.#maxSessions, -1);
  }

  /** Queues the entries a session changed in the check record on `batch` (its session-end write). */
  checksIn(batch: WriteBatch, projectId: string, checks: FeatureChecks): void {
    const entries = Object.entries(checks);
    if (entries.length === 0) return;
    batch.hset(
      this.#keys.checks(projectId),
      ...entries.flatMap(([id, state]) => [id, JSON.stringify(state)]),
    );
  }

  /** The check record: one HGETALL, its size the project's features whatever its sessions. */
  async checks(projectId: string): Promise<FeatureChecks> {
    const stored = await this.#redis.hgetall(this.#keys.checks(projectId));
    const checks: FeatureChecks = {};
    for (const [id, state] of Object.entries(stored)) {
      checks[id] = JSON.parse(state) as FeatureCheckState;
    }
    return checks;
  }

  /**
   * The session summaries just before `beforeIndex` (default: the newest), at most `limit`,
   * oldest first. Indexes count from the oldest kept summary, so a cursor holds while sessions
   * end (they are appended); only the cap (`maxSessions`) moves them. One LLEN and one LRANGE.
   */
  async window(
    projectId: string,
    options: { limit: number; beforeIndex?: number | undefined },
  ): Promise<SessionWindow> {
    const key = this.#keys.sessions(projectId);
    const total = await this.#redis.llen(key);
    const end = Math.min(total, options.beforeIndex ?? total);
    const start = Math.max(0, end - options.limit);
    const entries = end > start ? await this.#redis.lrange(key, start, end - 1) : [];
    return {
      sessions: entries.map(decodeSessionSummaryJson),
      startIndex: start,
      total,
    };
  }

  /** Every kept summary, oldest first. */
  async list(projectId: string): Promise<SessionSummary[]> {
    const entries = await this.#redis.lrange(this.#keys.sessions(projectId), 0, -1);
    return entries.map(decodeSessionSummaryJson);
  }

  /**
   * Which session last flipped each feature to passing: one HGETALL of the flip hash (its size is
   * the feature count, whatever the number of sessions).
   */
  async featureFlips(projectId: string): Promise<Map<string, FeatureFlip>> {
    const stored = await this.#redis.hgetall(this.#keys.featureFlips(projectId));
    const flips = new Map<string, FeatureFlip>();
    for (const [id, flip] of Object.entries(stored)) flips.set(id, JSON.parse(flip) as FeatureFlip);
    return flips;
  }
}
