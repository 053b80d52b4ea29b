import { Redis } from 'ioredis';
import { REDIS_URL } from './redis-url.js';

/** Characters that are special in a Redis glob pattern (`SCAN ... MATCH`). */
const GLOB_SPECIAL = /[*?[\]\\]/g;

/**
 * Deletes every key whose name starts with `prefix`, taken literally (glob characters in it are
 * escaped). Tests only: it SCANs the whole keyspace, which is fine for a private test prefix and
 * never for production data.
 */
export async function deletePrefix(prefix: string, url: string = REDIS_URL): Promise<void> {
  // An empty prefix would match every key in the database.
  if (prefix === '') throw new Error('deletePrefix needs a non-empty prefix');
  // The worker's old helper took (url, prefix); a URL here means the arguments are swapped.
  if (prefix.includes('://')) {
    throw new Error(`deletePrefix takes (prefix, url): the prefix "${prefix}" looks like a URL`);
  }
  const redis = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    const pattern = `${prefix.replace(GLOB_SPECIAL, '\\$&')}*`;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
