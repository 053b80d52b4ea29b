import type { Cluster } from 'ioredis';
import { DEFAULT_KEY_PREFIX } from './keys.js';
import type { RedisClient } from './redis-connection.js';
import { scripts } from './internal/scripts.js';

/** Options of `moveContentToBodies`. */
export interface MoveContentToBodiesOptions {
  /** A `Redis` or `Cluster` client (not closed here). */
  redis: RedisClient;
  /** The stores' key prefix. Default `baton` (`DEFAULT_KEY_PREFIX`). */
  prefix?: string | undefined;
  /** Keys asked for per SCAN call. Default 500. */
  scanCount?: number | undefined;
}

/**
 * The data migration that ends the read-time fallback for files written before bodies had keys
 * of their own (decisions/2026-12-02-memory-file-bodies-are-string-keys.md): every file hash of
 * every namespace under `prefix` that still holds its content in a `c` field gets a body, and
 * the field goes. Idempotent (a file already moved is skipped), safe beside running stores (one
 * script per file). Returns how many files were moved.
 */
export async function moveContentToBodies(options: MoveContentToBodiesOptions): Promise<number> {
  const prefix = options.prefix ?? DEFAULT_KEY_PREFIX;
  const pattern = `${prefix.length > 0 ? `${escapeGlob(prefix)}:` : ''}{*}:f:*`;
  const nodes = (options.redis as { isCluster?: boolean }).isCluster
    ? (options.redis as Cluster).nodes('master')
    : [options.redis];
  let moved = 0;
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(
        cursor,
        'MATCH',
        pattern,
        'COUNT',
        options.scanCount ?? 500,
        'TYPE',
        'hash',
      );
      cursor = next;
      for (const file of keys) {
        // Namespaces and prefixes hold no braces: the first `}:f:` ends the hash tag.
        const at = file.indexOf('}:f:');
        if (at < 0) continue;
        const body = `${file.slice(0, at)}}:b:${file.slice(at + 4)}`;
        moved += await scripts.call(options.redis, 'moveBody', file, body);
      }
    } while (cursor !== '0');
  }
  return moved;
}

function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/gu, (character) => `\\${character}`);
}
