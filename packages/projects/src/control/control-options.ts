import type { RedisClient, RedisTarget } from '@baton/storage-redis';
import type { SourcePolicy } from '../source-policy.js';

/** Options of `createBatonControl` (control.ts): where Redis is, and how projects are created. */
export interface BatonControlOptions {
  /** An existing ioredis client (not closed by `close()`). Give this, `target` or `url`. */
  redis?: RedisClient;
  /** Where Redis is; default `readRedisTarget()` (`REDIS_CLUSTER_NODES`, `REDIS_URL`). */
  target?: RedisTarget;
  /** Redis URL of one node; shorthand for `target: parseRedisUrl(url)`. */
  url?: string;
  /**
   * Key prefix with a hash tag; must match the workers'. Default `{baton}`. Memory keys follow it
   * (`keys.memoryPrefix`: `{acme}` keeps memory under `acme:{<project id>}:...`).
   */
  prefix?: string | undefined;
  /**
   * Where `createProject` runs: relative `repo` paths are resolved against this directory, and
   * its `baton.config.json` gives new projects their context config. Default `process.cwd()`.
   */
  cwd?: string;
  /** Environment `createProject` reads `BATON_CONTEXT_*` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Longest wait for a project's repository to answer at creation (ms). Default 60_000. */
  repoTimeoutMs?: number;
  /**
   * Which `repo` and `workspace` a new project may name (source-policy.ts). Default:
   * `BATON_REPO_HOSTS`, `BATON_REPO_ROOTS`, `BATON_WORKSPACE_ROOT` of `env`, open where unset.
   */
  sourcePolicy?: SourcePolicy | undefined;
  /** How long to wait for Redis before failing with `redis_unreachable` (ms). Default 5000. */
  connectTimeoutMs?: number;
}
