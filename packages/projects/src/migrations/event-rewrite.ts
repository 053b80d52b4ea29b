/**
 * How the event migrations rewrite what they upgrade (see
 * docs/decisions/2026-12-04-event-field-migrations.md): a Redis stream is copied with its entry
 * ids and renamed over the original, an events file is rewritten one line per line (its ids are
 * line numbers). What each migration changes in an event is its own `EventUpgrade`.
 */
import { randomUUID } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import type { RedisClient } from '@baton/storage-redis';
import { fileProjectPaths, localProjectNames } from '../file-project-paths.js';
import { withFileLock } from '../file-record-lock.js';
import { execPipeline } from '../internal/pipeline.js';
import { scripts } from '../internal/scripts.js';
import { SCRIPT_STATUS } from '../internal/status.js';
import type { MigrationContext } from './redis-migrations.js';
import { lostLockError } from './run-migrations.js';
import { configModel, parseOrNull, readOrNull } from './stored-text.js';

export type StoredEvent = Record<string, unknown>;

/**
 * The upgrade of one project's events, called on them in order: `event` (a parsed entry) in the
 * current shape, or null when it is no event the migration knows (left as it is).
 */
export type EventUpgrade = (event: StoredEvent) => StoredEvent | null;

/** A fresh `EventUpgrade` for a project whose configured model is `model` (null: none). */
export type EventUpgradeFor = (model: string | null) => EventUpgrade;

export function isObject(value: unknown): value is StoredEvent {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` with each field of `defaults` it lacks (a value that is no object is left as it is). */
export function withDefaults(value: unknown, defaults: StoredEvent): unknown {
  if (!isObject(value)) return value;
  const filled: StoredEvent = { ...value };
  for (const [field, fallback] of Object.entries(defaults)) {
    if (filled[field] === undefined) filled[field] = structuredClone(fallback);
  }
  return filled;
}

/** The upgraded `value`, or null when it is no object, unknown, or in the current shape already. */
function upgradedOrNull(value: unknown, upgrade: EventUpgrade): StoredEvent | null {
  if (!isObject(value)) return null;
  const upgraded = upgrade(value);
  return upgraded === null || JSON.stringify(upgraded) === JSON.stringify(value) ? null : upgraded;
}

/** Stream entries read per round trip. */
const PAGE = 500;

/** A stream entry as XRANGE returns it: id and flat field-value list (the event is field `e`). */
type StreamEntry = [string, string[]];

/** `fields` with its event upgraded, or null when nothing changes. */
function upgradedEntry(fields: string[], upgrade: EventUpgrade): string[] | null {
  const at = fields.indexOf('e');
  if (at < 0 || at % 2 !== 0) return null;
  const upgraded = upgradedOrNull(parseOrNull(fields[at + 1] ?? ''), upgrade);
  if (upgraded === null) return null;
  const copy = [...fields];
  copy[at + 1] = JSON.stringify(upgraded);
  return copy;
}

/** Entries of `key` after `after` (exclusive; `-` for all), `PAGE` at a time, to `each`. */
async function forEachPage(
  redis: RedisClient,
  key: string,
  after: string,
  each: (entries: StreamEntry[]) => Promise<boolean | void>,
): Promise<string> {
  let last = after;
  for (;;) {
    const start = last === '-' ? '-' : `(${last}`;
    const entries = (await redis.xrange(key, start, '+', 'COUNT', PAGE)) as StreamEntry[];
    if (entries.length > 0) last = entries[entries.length - 1]![0];
    if ((await each(entries)) === false || entries.length < PAGE) return last;
  }
}

/** True when some entry of `key` is in an earlier shape (reads until the first one). */
async function needsUpgrade(redis: RedisClient, key: string, upgrade: EventUpgrade) {
  let found = false;
  await forEachPage(redis, key, '-', async (entries) => {
    found = entries.some(([, fields]) => upgradedEntry(fields, upgrade) !== null);
    return !found;
  });
  return found;
}

/** Tries the swap again when events were appended while the copy was made. */
const ATTEMPTS = 10;

/**
 * How long a copy outlives its last page (ms): each page written sets it again and the swap
 * clears it, so the copy of a runner killed mid-copy goes by itself.
 */
export const COPY_TTL_MS = 10 * 60_000;

/**
 * Rewrites `key` with every entry in the current shape and its id kept: the entries go, page by
 * page, into a copy of this call's own (`<key>:upgrade:<random>`, same Cluster slot, expiring
 * `COPY_TTL_MS` after its last page) with explicit ids, and a script renames the copy over the
 * stream if this runner still holds the migration lock, the stream still ends where the copy does
 * and the copy is whole (else the new tail is copied and it tries again). The copy is this call's
 * alone, so a second runner (one that took the lock over) never deletes or renames it, and the
 * script refuses the swap of a runner that lost the lock. The stream itself is only ever replaced
 * whole.
 */
async function rewriteStream(context: MigrationContext, key: string, upgrade: EventUpgrade) {
  const { redis, keys } = context;
  const copy = `${key}:upgrade:${randomUUID()}`;
  try {
    let last = '-';
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      last = await forEachPage(redis, key, last, async (entries) => {
        if (entries.length === 0) return;
        const write = redis.pipeline();
        for (const [id, fields] of entries) {
          write.xadd(copy, id, ...(upgradedEntry(fields, upgrade) ?? fields));
        }
        write.pexpire(copy, COPY_TTL_MS);
        await execPipeline(write);
      });
      if (last === '-') return; // The stream is gone (its project was deleted).
      context.checkLock();
      const status = await scripts.call(
        redis,
        'replaceStream',
        key,
        copy,
        keys.migrationLock,
        last,
        context.lockToken,
      );
      if (status === SCRIPT_STATUS.owned) return;
      if (status === SCRIPT_STATUS.fenced) throw lostLockError(keys);
      if ((await redis.exists(key)) === 0) return; // Its project was deleted meanwhile.
      // The copy expired (a runner stalled longer than its TTL): copy the whole stream again.
      if ((await redis.exists(copy)) === 0) last = '-';
    }
  } finally {
    await redis.del(copy);
  }
  if ((await redis.exists(key)) === 0) return;
  throw new Error(`events of ${key} kept being appended while they were upgraded: start again`);
}

/** Rewrites each of projects `ids`' event streams that holds an event `upgradeFor` changes. */
export async function rewriteRedisEvents(
  context: MigrationContext,
  ids: readonly string[],
  upgradeFor: EventUpgradeFor,
): Promise<void> {
  const { redis, keys } = context;
  const read = redis.pipeline();
  for (const id of ids) read.hget(keys.project(id), 'config');
  const configs = (await execPipeline(read)) as (string | null)[];
  for (const [index, id] of ids.entries()) {
    const model = configModel(configs[index]);
    if (await needsUpgrade(redis, keys.events(id), upgradeFor(model))) {
      await rewriteStream(context, keys.events(id), upgradeFor(model));
    }
  }
}

/**
 * Rewrites each `BATON_HOME` project's `events.jsonl` that holds an event `upgradeFor` changes,
 * whole (temporary file, then rename) under the file's lock, one line per line.
 */
export async function rewriteFileEvents(home: string, upgradeFor: EventUpgradeFor): Promise<void> {
  for (const name of await localProjectNames(home)) {
    const paths = fileProjectPaths(home, name);
    await withFileLock(paths.events, async () => {
      const text = await readOrNull(paths.events);
      if (text === null) return;
      const record = parseOrNull((await readOrNull(paths.record)) ?? '{}') as {
        project?: { model?: unknown };
      } | null;
      const model = record?.project?.model;
      const upgrade = upgradeFor(typeof model === 'string' ? model : null);
      let changed = false;
      const lines = text.split('\n').map((line) => {
        if (line.length === 0) return line;
        const upgraded = upgradedOrNull(parseOrNull(line), upgrade);
        if (upgraded === null) return line;
        changed = true;
        return JSON.stringify(upgraded);
      });
      if (!changed) return;
      const temporary = `${paths.events}.${process.pid}.tmp`;
      await writeFile(temporary, lines.join('\n'), { mode: 0o600 });
      await rename(temporary, paths.events);
    });
  }
}
