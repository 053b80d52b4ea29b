/**
 * The run-once upgrade of project events written before a field of a turn, a session start, a
 * session result or a check's evidence existed (Redis migration `2026-12-04-event-fields`,
 * `BATON_HOME` migration `2026-12-04-local-event-fields`). Each missing field gets what the
 * decoder used to read its absence as, so nothing a reader shows changes; the fields the decoder
 * left absent get the value recorded in docs/decisions/2026-12-04-event-field-migrations.md. Entry
 * ids are kept: a Redis stream is copied with its ids and renamed over the original, an events
 * file keeps one line per event (its ids are line numbers).
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { RedisClient } from '@baton/storage-redis';
import { fileProjectPaths, localProjectNames } from '../file-project-paths.js';
import { withFileLock } from '../file-record-lock.js';
import { execPipeline } from '../internal/pipeline.js';
import { scripts } from '../internal/scripts.js';
import { SCRIPT_STATUS } from '../internal/status.js';
import type { MigrationContext } from './redis-migrations.js';

type Stored = Record<string, unknown>;

/** The model of a turn whose session's start event and project named none. */
const UNRECORDED_MODEL = 'unrecorded';

/**
 * The `sandbox` of a session start recorded before commands ran in the sandbox: they ran on the
 * host, which is what `mode: 'off'` says everywhere it shows.
 */
export const PRE_SANDBOX = {
  mode: 'off',
  notice: 'recorded before Baton ran commands in a sandbox: they ran on the host',
} as const;

/** The session totals fields the decoder knows; absent ones read as 0. */
const TOTALS = {
  turns: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  cacheWrite5mInputTokens: 0,
  cacheWrite1hInputTokens: 0,
  clearedInputTokens: 0,
  clearedToolUses: 0,
  clearedThinkingTurns: 0,
  cacheInvalidatedInputTokens: 0,
  costUsd: 0,
};

const EVIDENCE = {
  exitCode: null,
  durationMs: 0,
  outputTail: '',
  commit: null,
  at: 0,
  sessionId: '',
};

const VERIFICATION = {
  verified: 0,
  claimed: 0,
  regressed: 0,
  unverified: 0,
  pending: 0,
  regressedIds: [],
  rerun: 0,
  rerunMs: 0,
};

function isObject(value: unknown): value is Stored {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` with each field of `defaults` it lacks (a value that is no object is left as it is). */
function withDefaults(value: unknown, defaults: Stored): unknown {
  if (!isObject(value)) return value;
  const filled: Stored = { ...value };
  for (const [field, fallback] of Object.entries(defaults)) {
    if (filled[field] === undefined) filled[field] = structuredClone(fallback);
  }
  return filled;
}

function totals(value: unknown): unknown {
  return withDefaults(value === undefined ? {} : value, TOTALS);
}

/** Turns written without the TTL breakdown count every cache write as 5-minute. */
function turnUsage(value: unknown): unknown {
  if (!isObject(value)) return value;
  const usage = withDefaults(value, {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  }) as Stored;
  const written = usage.cacheCreationInputTokens;
  if (typeof usage.cacheWrite5mInputTokens !== 'number') {
    usage.cacheWrite5mInputTokens = typeof written === 'number' ? written : 0;
  }
  if (typeof usage.cacheWrite1hInputTokens !== 'number') usage.cacheWrite1hInputTokens = 0;
  return usage;
}

function sessionResult(value: unknown): unknown {
  if (!isObject(value)) return value;
  const result = withDefaults(value, {
    reason: '',
    turns: 0,
    allFeaturesPass: false,
    flippedFeatures: [],
    startedAt: 0,
    endedAt: 0,
    commits: [],
    progressEntry: 'none',
  }) as Stored;
  result.usage = totals(result.usage);
  for (const side of ['featuresBefore', 'featuresAfter']) {
    result[side] = withDefaults(result[side] === undefined ? {} : result[side], {
      passing: 0,
      total: 0,
    });
  }
  if (isObject(result.checks)) {
    result.checks = Object.fromEntries(
      Object.entries(result.checks).map(([feature, state]) => [
        feature,
        isObject(state)
          ? {
              ...state,
              evidence: state.evidence == null ? null : withDefaults(state.evidence, EVIDENCE),
            }
          : state,
      ]),
    );
  }
  if (result.verification !== undefined) {
    result.verification = withDefaults(result.verification, VERIFICATION);
  }
  return result;
}

/** Who a project's sessions ran as, for turns written before they named their model. */
interface EventModels {
  /** Session id -> the model its `session-start` named (filled while events are read in order). */
  sessions: Map<string, string>;
  /** The project's configured model; null: the worker's default, which nothing recorded. */
  project: string | null;
}

/**
 * `event` (a parsed entry) in the current shape, or null when it already is (or is no event this
 * migration knows: the decoder reports it as it always did). Call it on a project's events in
 * order: a `session-start` it sees names the model of its session's later turns.
 */
function upgradeEvent(event: unknown, models: EventModels): Stored | null {
  if (!isObject(event)) return null;
  if (event.type === 'session-start' && typeof event.sessionId === 'string') {
    if (typeof event.model === 'string') models.sessions.set(event.sessionId, event.model);
  }
  const upgraded = upgradedFields(event, models);
  return upgraded === null || JSON.stringify(upgraded) === JSON.stringify(event) ? null : upgraded;
}

function upgradedFields(event: Stored, models: EventModels): Stored | null {
  switch (event.type) {
    case 'session-start':
      return event.sandbox === undefined ? { ...event, sandbox: { ...PRE_SANDBOX } } : event;
    case 'turn': {
      // Before fallback models a session ran on the model its start named.
      const model =
        typeof event.model === 'string'
          ? event.model
          : (models.sessions.get(String(event.sessionId)) ?? models.project ?? UNRECORDED_MODEL);
      const turn = withDefaults(event, {
        phase: 'work',
        durationMs: 0,
        appliedEdits: [],
        clearedInputTokens: 0,
        cacheInvalidation: null,
        costUsd: 0,
      }) as Stored;
      turn.model = model;
      // Before traces the response's model was not kept: the one the request named.
      if (typeof turn.responseModel !== 'string') turn.responseModel = model;
      turn.usage = turnUsage(turn.usage);
      if (isObject(turn.cacheInvalidation)) {
        turn.cacheInvalidation = withDefaults(turn.cacheInvalidation, {
          rewrittenInputTokens: 0,
          costUsd: 0,
        });
      }
      turn.totals = totals(turn.totals);
      return turn;
    }
    case 'check-passed':
    case 'check-failed':
    case 'feature-regressed':
      return { ...event, evidence: withDefaults(event.evidence, EVIDENCE) };
    case 'session-end':
      return { ...event, result: sessionResult(event.result) };
    default:
      return null;
  }
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function configModel(config: string | null | undefined): string | null {
  const model = (parseOrNull(config ?? '{}') as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : null;
}

/** Stream entries read per round trip. */
const PAGE = 500;

/** A stream entry as XRANGE returns it: id and flat field-value list (the event is field `e`). */
type StreamEntry = [string, string[]];

/** `fields` with its event upgraded, or null when nothing changes. */
function upgradedEntry(fields: string[], models: EventModels): string[] | null {
  const at = fields.indexOf('e');
  if (at < 0 || at % 2 !== 0) return null;
  const upgraded = upgradeEvent(parseOrNull(fields[at + 1] ?? ''), models);
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
async function needsUpgrade(redis: RedisClient, key: string, project: string | null) {
  const models: EventModels = { sessions: new Map(), project };
  let found = false;
  await forEachPage(redis, key, '-', async (entries) => {
    found = entries.some(([, fields]) => upgradedEntry(fields, models) !== null);
    return !found;
  });
  return found;
}

/** Tries the swap again when events were appended while the copy was made. */
const ATTEMPTS = 10;

/**
 * Rewrites `key` with every entry in the current shape and its id kept: the entries go, page by
 * page, into `<key>:upgrade` with explicit ids, and a script renames the copy over the stream if
 * the stream still ends where the copy does (else the new tail is copied and it tries again). A
 * run cut short leaves the copy, which the next run deletes first; the stream itself is only ever
 * replaced whole.
 */
async function rewriteStream(redis: RedisClient, key: string, project: string | null) {
  const copy = `${key}:upgrade`;
  await redis.del(copy);
  const models: EventModels = { sessions: new Map(), project };
  let last = '-';
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    last = await forEachPage(redis, key, last, async (entries) => {
      if (entries.length === 0) return;
      const write = redis.pipeline();
      for (const [id, fields] of entries) {
        write.xadd(copy, id, ...(upgradedEntry(fields, models) ?? fields));
      }
      await execPipeline(write);
    });
    if (last === '-') return; // The stream is gone (its project was deleted).
    const status = await scripts.call(redis, 'replaceStream', key, copy, last);
    if (status === SCRIPT_STATUS.owned) return;
    if ((await redis.exists(key)) === 0) break; // Its project was deleted meanwhile.
  }
  await redis.del(copy);
  if ((await redis.exists(key)) === 0) return;
  throw new Error(`events of ${key} kept being appended while they were upgraded: start again`);
}

/** The Redis migration: each project's event stream that holds an event of an earlier shape. */
export async function completeRedisEvents(
  context: MigrationContext,
  ids: readonly string[],
): Promise<void> {
  const { redis, keys } = context;
  const read = redis.pipeline();
  for (const id of ids) read.hget(keys.project(id), 'config');
  const configs = (await execPipeline(read)) as (string | null)[];
  for (const [index, id] of ids.entries()) {
    const project = configModel(configs[index]);
    if (await needsUpgrade(redis, keys.events(id), project)) {
      await rewriteStream(redis, keys.events(id), project);
    }
  }
}

/**
 * The `BATON_HOME` migration: each project's `events.jsonl` that holds an event of an earlier
 * shape, rewritten whole (temporary file, then rename) under the file's lock, one line per line.
 */
export async function completeFileEvents(home: string): Promise<void> {
  for (const name of await localProjectNames(home)) {
    const paths = fileProjectPaths(home, name);
    await withFileLock(paths.events, async () => {
      const text = await readOrNull(paths.events);
      if (text === null) return;
      const record = parseOrNull((await readOrNull(paths.record)) ?? '{}') as {
        project?: { model?: unknown };
      } | null;
      const model = record?.project?.model;
      const models: EventModels = {
        sessions: new Map(),
        project: typeof model === 'string' ? model : null,
      };
      let changed = false;
      const lines = text.split('\n').map((line) => {
        if (line.length === 0) return line;
        const upgraded = upgradeEvent(parseOrNull(line), models);
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

async function readOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
