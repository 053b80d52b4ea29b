/**
 * The one place that builds Redis key strings for the worker, the control API and the CLI.
 *
 * Everything lives under one prefix carrying a `{hash tag}` (default `{baton}`): BullMQ uses it as
 * its queue prefix, so every queue key lands in one Redis Cluster slot (BullMQ's Lua scripts touch
 * several keys at once), and our own project keys share that slot so the few scripts that touch a
 * project hash and its transition list together never see CROSSSLOT errors.
 */

/** Default key prefix (and BullMQ queue prefix). */
export const DEFAULT_PREFIX = '{baton}';

/** The queue that carries one job per agent session. */
export const SESSION_QUEUE_NAME = 'baton-sessions';

/** The queue that carries maintenance jobs (memory expiry sweep, job retention). */
export const MAINTENANCE_QUEUE_NAME = 'baton-maintenance';

export interface BatonKeys {
  /** The prefix itself (pass it to BullMQ as `prefix`). */
  prefix: string;
  /**
   * The key prefix of this deployment's memory stores (`@baton/storage-redis` keys
   * `<memoryPrefix>:{<project id>}:...`): `memoryPrefixOf(prefix)`.
   */
  memoryPrefix: string;
  /** Sorted set of project ids scored by creation time. */
  projects: string;
  /**
   * Lex-ordered index of one sort order over one status (or `all`): every member scores 0 and
   * reads `<sort key>:<id>` (`<id>` for the id order), so a page after a cursor is one
   * ZRANGE BYLEX however many projects there are. Maintained by the repository's Lua.
   */
  projectIndex(sort: ProjectSort, status: string): string;
  /** What the index scripts prepend to `<sort>:<status>` (the same string `projectIndex` builds on). */
  projectIndexBase: string;
  /** Hash: project id → the lowercased text a search matches (id and goal). */
  projectSearch: string;
  /**
   * Set by earlier versions once their read-time fold-in had indexed every project; the
   * `2026-12-04-project-index` migration reads it (nothing more to index) and deletes it.
   */
  projectIndexReady: string;
  /** Sorted set of project ids scored by the `projectVersion` of their latest change. */
  projectChanges: string;
  /** Counter bumped by every change of any project (the score of `projectChanges`). */
  projectVersion: string;
  /** Hash holding one project's record and counters. */
  project(projectId: string): string;
  /** List of a project's status transitions (JSON). */
  transitions(projectId: string): string;
  /** List of a project's session summaries (JSON). */
  sessions(projectId: string): string;
  /**
   * Hash: feature id → the latest session that flipped it to passing (JSON `FeatureFlip`), so the
   * checklist costs its features, not the project's sessions.
   */
  featureFlips(projectId: string): string;
  /**
   * Hash: feature id → the feature's check state (JSON `FeatureCheckState`: status and the
   * evidence of its last check run), laid over by each session end.
   */
  checks(projectId: string): string;
  /** Stream of a project's events (capped). */
  events(projectId: string): string;
  /** List of the operator's guidance messages (JSON, capped). */
  guidance(projectId: string): string;
  /** Hash: guidance id → the session and turn that acknowledged it. */
  guidanceAcks(projectId: string): string;
  /** Sorted set of a project's kept transcripts: session id scored by its start (epoch ms). */
  transcripts(projectId: string): string;
  /** List of one session's transcript records (JSON: a header, messages, an end). */
  transcript(projectId: string, sessionId: string): string;
  /** The per-project exclusivity lease: its value is the holder's fencing token, with a TTL. */
  lease(projectId: string): string;
  /** Counter every lease takes its fencing token from (INCR; shared by all projects, never reset). */
  fenceCounter: string;
  /** List of a project's latest webhook delivery outcomes (JSON, newest first, capped). */
  webhookDeliveries(projectId: string): string;
  /** Token bucket shared by every worker for model requests. */
  modelRateLimit: string;
  /**
   * The deployment marker (JSON `{ id, createdAt }`), written once: its absence on a Redis that
   * held projects means Redis lost its data (redis-safety.ts).
   */
  deployment: string;
  /** Hash: id of each data migration applied (`migrations/redis-migrations.ts`) → when (ISO 8601). */
  migrations: string;
  /** The lock one migration runner holds at a time (its value is the runner's token, with a TTL). */
  migrationLock: string;
  /** Pub/sub channel telling workers to abort a project's running session. */
  cancelChannel: string;
  /** Pub/sub channel telling workers to pause a project's running session (end-of-session turn, then stop). */
  pauseChannel: string;
}

/** Prefixes must carry a non-empty hash tag so all keys stay in one Cluster slot. */
export function isValidPrefix(prefix: string): boolean {
  return /^[^{}:\s]*\{[^{}\s]+\}[^{}\s]*$/.test(prefix) && !prefix.includes(':');
}

/**
 * What is wrong with `prefix` as a key prefix, in one line naming where it came from (`source`:
 * `BATON_PREFIX` when a variable gave it, `prefix` for the option); null when it is valid.
 */
export function prefixProblem(prefix: string, source: string): string | null {
  return isValidPrefix(prefix)
    ? null
    : `${source} must contain one {hash tag} and no ":", got "${prefix}"`;
}

/**
 * The memory stores' key prefix of the deployment whose key prefix is `prefix` (a valid one), so
 * deployments sharing one Redis never share a project's memory or its fence. The memory keys
 * carry the project's own hash tag (`<memory prefix>:{<project id>}:...`), so the prefix's braces
 * go: `{baton}` gives `baton` (the default, where every earlier version kept memory), `{acme}`
 * gives `acme`. Text around the tag (`pre{tag}post`) keeps its parts apart with colons
 * (`pre:tag:post`), which no `{tag}` alone can give: two prefixes never give the same one.
 */
export function memoryPrefixOf(prefix: string): string {
  const match = /^([^{]*)\{([^}]*)\}(.*)$/.exec(prefix);
  if (match === null) return prefix;
  const [, before = '', tag = '', after = ''] = match;
  return before === '' && after === '' ? tag : `${before}:${tag}:${after}`;
}

/** The orders the project index keeps: creation time, last status change, id. */
export type ProjectSort = 'created' | 'updated' | 'id';

export const PROJECT_SORTS: readonly ProjectSort[] = ['created', 'updated', 'id'];

export function createKeys(prefix: string = DEFAULT_PREFIX): BatonKeys {
  const base = `${prefix}:project:`;
  return {
    prefix,
    memoryPrefix: memoryPrefixOf(prefix),
    projects: `${prefix}:projects`,
    projectIndex: (sort, status) => `${prefix}:projects:by-${sort}:${status}`,
    projectIndexBase: `${prefix}:projects:by-`,
    projectSearch: `${prefix}:projects:search`,
    projectIndexReady: `${prefix}:projects:indexed`,
    projectChanges: `${prefix}:projects:changes`,
    projectVersion: `${prefix}:projects:version`,
    project: (projectId) => `${base}${projectId}`,
    transitions: (projectId) => `${base}${projectId}:transitions`,
    sessions: (projectId) => `${base}${projectId}:sessions`,
    featureFlips: (projectId) => `${base}${projectId}:feature-flips`,
    checks: (projectId) => `${base}${projectId}:checks`,
    events: (projectId) => `${base}${projectId}:events`,
    lease: (projectId) => `${base}${projectId}:lease`,
    fenceCounter: `${prefix}:fence`,
    transcripts: (projectId) => `${base}${projectId}:transcripts`,
    transcript: (projectId, sessionId) => `${base}${projectId}:transcript:${sessionId}`,
    guidance: (projectId) => `${base}${projectId}:guidance`,
    guidanceAcks: (projectId) => `${base}${projectId}:guidance-acks`,
    webhookDeliveries: (projectId) => `${base}${projectId}:webhooks`,
    modelRateLimit: `${prefix}:rate:model`,
    deployment: `${prefix}:deployment`,
    migrations: `${prefix}:migrations`,
    migrationLock: `${prefix}:migrations:lock`,
    cancelChannel: `${prefix}:cancel`,
    pauseChannel: `${prefix}:pause`,
  };
}
