/**
 * The Redis key schema of a memory namespace. Every key string the package uses is built here.
 *
 * All keys of one namespace start with `<prefix>:{<namespace>}:`; the `{hash tag}` puts the whole
 * namespace in one Redis Cluster slot, so every Lua script touches a single slot (no CROSSSLOT).
 *
 * | key                              | type   | what                                                  |
 * |----------------------------------|--------|-------------------------------------------------------|
 * | `<base>meta`                     | hash   | `bytes`, `files` (usage), `seq` (version counter), `rootm` |
 * | `<base>atime`                    | zset   | file path -> last read/write (epoch ms), for expiry   |
 * | `<base>feed`                     | stream | change feed, capped with `MAXLEN ~`                   |
 * | `<base>c:<dir>`                  | hash   | directory index: child name -> `f,<size>,<mtime>` or `d,<mtime>` (root: `<base>c:`) |
 * | `<base>f:<path>`                 | hash   | file: `v` version, `m` header, `hs` history sizes      |
 * | `<base>b:<path>`                 | string | file body: the version padded to 40 bytes, then the content |
 * | `<base>h:<path>`                 | list   | history: older versions (deltas or headers), newest   |
 * | `<base>x:<version>`              | string | an older version kept whole (a body), named in its file's `hs` |
 * | `<base>w:<id>`                   | string | a write's staged body, renamed to `b:` by the write script; expires |
 *
 * Lua scripts receive the `c:`, `f:`, `h:`, `x:` and `b:` prefixes as their first five ARGV
 * entries and only append store paths (or versions) to them; the stage is a key of the write
 * script. So this module stays the one place that spells keys.
 */

/** Key builder for one namespace. */
export interface NamespaceKeys {
  /** Common start of every key of the namespace, e.g. `baton:{project-1}:`. */
  readonly base: string;
  /** Usage counters and the version sequence. */
  readonly meta: string;
  /** Access-time index (sorted set) used by the expiry sweep. */
  readonly accessTimes: string;
  /** Capped change-feed stream. */
  readonly feed: string;
  /** Prefix of directory-index hashes; append a directory's store path (`''` for the root). */
  readonly childrenPrefix: string;
  /** Prefix of file hashes; append a file's store path. */
  readonly filePrefix: string;
  /** Prefix of history lists; append a file's store path. */
  readonly historyPrefix: string;
  /** Prefix of older versions kept whole in a key of their own; append the version. */
  readonly keptPrefix: string;
  /** Prefix of file bodies; append a file's store path. */
  readonly bodyPrefix: string;
  /** Directory index of `directory`. */
  children(directory: string): string;
  /** File hash of `path`. */
  file(path: string): string;
  /** History list of `path`. */
  history(path: string): string;
  /** An older version kept whole, by its version id. */
  kept(version: string): string;
  /** Body of `path`: its version padded to `BODY_HEADER_BYTES`, then its content. */
  body(path: string): string;
  /**
   * A write's stage: the client SETs the new body there (with an expiry) and the write script,
   * sent right behind it, renames it to the file's body or deletes it. `id` is unique per write.
   */
  writeStage(id: string): string;
}

/** Bytes before the content in a body: the version, padded with spaces (see lib.lua's HEADER). */
export const BODY_HEADER_BYTES = 40;

/** Default key prefix. */
export const DEFAULT_KEY_PREFIX = 'baton';

const FORBIDDEN = /[{}\s]/u;

/** Builds the keys of `namespace` under `prefix`. Throws `TypeError` for names that would break the hash tag. */
export function createNamespaceKeys(
  namespace: string,
  prefix: string = DEFAULT_KEY_PREFIX,
): NamespaceKeys {
  if (namespace.length === 0 || FORBIDDEN.test(namespace)) {
    throw new TypeError(
      `Invalid namespace ${JSON.stringify(namespace)}: it must be non-empty without braces or whitespace.`,
    );
  }
  if (FORBIDDEN.test(prefix)) {
    throw new TypeError(`Invalid key prefix ${JSON.stringify(prefix)}: no braces or whitespace.`);
  }
  const base = `${prefix.length > 0 ? `${prefix}:` : ''}{${namespace}}:`;
  const childrenPrefix = `${base}c:`;
  const filePrefix = `${base}f:`;
  const historyPrefix = `${base}h:`;
  const keptPrefix = `${base}x:`;
  const bodyPrefix = `${base}b:`;
  return {
    base,
    meta: `${base}meta`,
    accessTimes: `${base}atime`,
    feed: `${base}feed`,
    childrenPrefix,
    filePrefix,
    historyPrefix,
    keptPrefix,
    bodyPrefix,
    children: (directory) => childrenPrefix + directory,
    file: (path) => filePrefix + path,
    history: (path) => historyPrefix + path,
    kept: (version) => keptPrefix + version,
    body: (path) => bodyPrefix + path,
    writeStage: (id) => `${base}w:${id}`,
  };
}
