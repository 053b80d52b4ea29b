/**
 * Session summaries stored before prompt caching have no cache counts, and those stored before
 * fallback models no model. The migrations here write in what their absence meant (no cache
 * reads or writes: 0; the model: the one the session's `session-start` event named, else the
 * project's own model, else `unrecorded`), so readers take `SessionSummary` as it is.
 */
import { rename, writeFile } from 'node:fs/promises';
import { execPipeline } from '../internal/pipeline.js';
import { scripts } from '../internal/scripts.js';
import { SCRIPT_STATUS } from '../internal/status.js';
import {
  fileProjectPaths,
  localProjectNames,
  type FileProjectPaths,
} from '../file-project-paths.js';
import type { MigrationContext } from './redis-migrations.js';
import { configModel, parseOrNull, readOrNull } from './stored-text.js';

/** The model of a summary stored before models were kept, whose session left no start event. */
const UNRECORDED_MODEL = 'unrecorded';

type StoredSummary = Record<string, unknown>;

/** True when `summary` lacks a field a summary stored now always has. */
function incomplete(summary: StoredSummary): boolean {
  return (
    typeof summary.cacheReadInputTokens !== 'number' ||
    typeof summary.cacheCreationInputTokens !== 'number' ||
    typeof summary.model !== 'string'
  );
}

/**
 * `summary` with what an absent field meant; `models` maps session ids to the model their
 * `session-start` event named, `projectModel` is the project's configured one (null: the
 * worker's default, which the summary cannot know).
 */
function completed(
  summary: StoredSummary,
  models: ReadonlyMap<string, string>,
  projectModel: string | null,
): StoredSummary {
  return {
    ...summary,
    cacheReadInputTokens:
      typeof summary.cacheReadInputTokens === 'number' ? summary.cacheReadInputTokens : 0,
    cacheCreationInputTokens:
      typeof summary.cacheCreationInputTokens === 'number' ? summary.cacheCreationInputTokens : 0,
    model:
      typeof summary.model === 'string'
        ? summary.model
        : (models.get(String(summary.sessionId)) ?? projectModel ?? UNRECORDED_MODEL),
  };
}

/** Session id -> model of every `session-start` event among `events` (parsed event objects). */
function startedModels(events: Iterable<unknown>): Map<string, string> {
  const models = new Map<string, string>();
  for (const event of events) {
    if (typeof event !== 'object' || event === null) continue;
    const start = event as { type?: unknown; sessionId?: unknown; model?: unknown };
    if (
      start.type === 'session-start' &&
      typeof start.sessionId === 'string' &&
      typeof start.model === 'string'
    ) {
      models.set(start.sessionId, start.model);
    }
  }
  return models;
}

/** The stored summary `json` holds, or null when it holds no JSON object. */
function parseSummary(json: string): StoredSummary | null {
  const parsed = parseOrNull(json);
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as StoredSummary)
    : null;
}

/** Tries a project's list again when a concurrent trim moved an entry under the migration. */
const ATTEMPTS = 5;

/** A summary in the current shape, or null when it already is (`upgrade` of the rewrites below). */
type SummaryUpgrade = (summary: StoredSummary) => Promise<StoredSummary | null>;

/**
 * Rewrites each entry of project `id`'s `sessions` list that `upgrade` changes, entry by entry
 * (compare-and-set), so a summary pushed or a trim made meanwhile is never written over; throws
 * when the list kept changing for every attempt (as `rewriteStream` does).
 */
async function rewriteRedisSummaries(
  context: MigrationContext,
  id: string,
  upgrade: SummaryUpgrade,
): Promise<void> {
  const { redis, keys } = context;
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const entries = await redis.lrange(keys.sessions(id), 0, -1);
    let moved = false;
    for (const [at, entry] of entries.entries()) {
      const summary = parseSummary(entry);
      const upgraded = summary === null ? null : await upgrade(summary);
      if (upgraded === null) continue;
      const status = await scripts.call(
        redis,
        'replaceListEntry',
        keys.sessions(id),
        at,
        entry,
        JSON.stringify(upgraded),
      );
      if (status !== SCRIPT_STATUS.owned) moved = true;
    }
    if (!moved) return;
  }
  // Not recorded as applied then: the summaries it skipped would stay in the old shape for good.
  throw new Error(
    `session summaries of project ${id} kept changing while they were upgraded: start again`,
  );
}

/** The Redis migration of cache counts and models: each project's `sessions` list. */
export async function completeRedisSessionSummaries(
  context: MigrationContext,
  ids: readonly string[],
): Promise<void> {
  const { redis, keys } = context;
  const read = redis.pipeline();
  for (const id of ids) read.hget(keys.project(id), 'config');
  const configs = (await execPipeline(read)) as (string | null)[];
  for (const [index, id] of ids.entries()) {
    let models: Map<string, string> | undefined;
    await rewriteRedisSummaries(context, id, async (summary) => {
      if (!incomplete(summary)) return null;
      models ??= startedModels(
        (await redis.xrange(keys.events(id), '-', '+')).map(([, fields]) =>
          parseOrNull(fields[fields.indexOf('e') + 1] ?? ''),
        ),
      );
      return completed(summary, models, configModel(configs[index]));
    });
  }
}

/** A summary stored before sessions listed their commits: none (what `?? []` read it as). */
async function withCommits(summary: StoredSummary): Promise<StoredSummary | null> {
  return Array.isArray(summary.commits) ? null : { ...summary, commits: [] };
}

/** The Redis migration of commit lists: each project's `sessions` list. */
export async function completeRedisSummaryCommits(
  context: MigrationContext,
  ids: readonly string[],
): Promise<void> {
  for (const id of ids) await rewriteRedisSummaries(context, id, withCommits);
}

/**
 * Rewrites each project's `sessions.jsonl` whole (temporary file, then rename) when `upgradeFor`'s
 * upgrade changes a line of it; `upgradeFor` is asked once per project.
 */
async function rewriteFileSummaries(
  home: string,
  upgradeFor: (paths: FileProjectPaths) => SummaryUpgrade,
): Promise<void> {
  for (const name of await localProjectNames(home)) {
    const paths = fileProjectPaths(home, name);
    const text = await readOrNull(paths.sessions);
    if (text === null) continue;
    const lines = text.split('\n').filter((line) => line.length > 0);
    const upgrade = upgradeFor(paths);
    let changed = false;
    const upgraded: string[] = [];
    for (const line of lines) {
      const summary = parseSummary(line);
      const replacement = summary === null ? null : await upgrade(summary);
      if (replacement !== null) changed = true;
      upgraded.push(replacement === null ? line : JSON.stringify(replacement));
    }
    if (!changed) continue;
    const temporary = `${paths.sessions}.${process.pid}.tmp`;
    await writeFile(temporary, `${upgraded.join('\n')}\n`, { mode: 0o600 });
    await rename(temporary, paths.sessions);
  }
}

/** The `BATON_HOME` migration of cache counts and models: each project's `sessions.jsonl`. */
export function completeFileSessionSummaries(home: string): Promise<void> {
  return rewriteFileSummaries(home, (paths) => {
    let found: { models: Map<string, string>; project: string | null } | undefined;
    return async (summary) => {
      if (!incomplete(summary)) return null;
      if (found === undefined) {
        const events = (await readOrNull(paths.events)) ?? '';
        const record = parseOrNull((await readOrNull(paths.record)) ?? '{}') as {
          project?: { model?: unknown };
        } | null;
        const model = record?.project?.model;
        found = {
          models: startedModels(events.split('\n').map(parseOrNull)),
          project: typeof model === 'string' ? model : null,
        };
      }
      return completed(summary, found.models, found.project);
    };
  });
}

/** The `BATON_HOME` migration of commit lists: each project's `sessions.jsonl`. */
export function completeFileSummaryCommits(home: string): Promise<void> {
  return rewriteFileSummaries(home, () => withCommits);
}
