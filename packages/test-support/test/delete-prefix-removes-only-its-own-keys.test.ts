import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { deletePrefix, randomHex, REDIS_URL } from '../src/index.js';

let redis: Redis;
/** This test run's own root; every key a test writes starts with it. */
let root: string;

beforeAll(() => {
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
});
afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  // Cleaned up without the function under test, so a broken deletePrefix cannot hide its leftovers.
  const leftovers = await keysUnder(root);
  if (leftovers.length > 0) await redis.del(...leftovers);
});

/** Every key starting with `prefix`, found by a full SCAN compared in JavaScript (no glob). */
async function keysUnder(prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    found.push(...keys.filter((key) => key.startsWith(prefix)));
  } while (cursor !== '0');
  return found.sort();
}

async function writeKeys(keys: string[]): Promise<void> {
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.set(key, '1');
  await pipeline.exec();
}

describe('deletePrefix', () => {
  it('deletes every key under the prefix, across many SCAN pages, and no key of a sibling prefix', async () => {
    root = `{ts-${randomHex()}}`;
    // More keys than one SCAN COUNT, so the cursor loop and several DELs are exercised.
    const mine = Array.from({ length: 2_500 }, (_, index) => `${root}:a:${index}`);
    const siblings = [`${root}:b:1`, `${root}:b:2`, `${root}:ab`, `${root}:`];
    await writeKeys([...mine, ...siblings]);

    await deletePrefix(`${root}:a:`);

    expect(await keysUnder(`${root}:a:`)).toEqual([]);
    expect(await keysUnder(root)).toEqual([...siblings].sort());
  });

  it('takes the prefix literally: glob characters in it match only themselves', async () => {
    root = `{ts-${randomHex()}}`;
    const literal = `${root}:[ab]*?\\:`;
    const mine = [`${literal}1`, `${literal}2`];
    // Keys the prefix would match if it were read as a glob pattern.
    const lookalikes = [`${root}:a*?\\:1`, `${root}:bx?\\:1`, `${root}:[ab]xy\\:1`];
    await writeKeys([...mine, ...lookalikes]);

    await deletePrefix(literal);

    expect(await keysUnder(root)).toEqual([...lookalikes].sort());
  });

  it('works on the Redis the url names', async () => {
    root = `{ts-${randomHex()}}`;
    const otherDatabase = new URL(REDIS_URL);
    otherDatabase.pathname = '/1';
    const other = new Redis(otherDatabase.href, { maxRetriesPerRequest: 1 });
    try {
      await other.set(`${root}:x`, '1');
      await writeKeys([`${root}:x`]);

      await deletePrefix(`${root}:`, otherDatabase.href);

      expect(await other.exists(`${root}:x`)).toBe(0);
      expect(await keysUnder(root)).toEqual([`${root}:x`]);
    } finally {
      await other.del(`${root}:x`);
      other.disconnect();
    }
  });

  it('refuses an empty prefix and a prefix that is a URL (swapped arguments)', async () => {
    root = `{ts-${randomHex()}}`;
    await writeKeys([`${root}:kept`]);
    await expect(deletePrefix('')).rejects.toThrow('deletePrefix needs a non-empty prefix');
    await expect(deletePrefix(REDIS_URL, `${root}:`)).rejects.toThrow(
      `deletePrefix takes (prefix, url): the prefix "${REDIS_URL}" looks like a URL`,
    );
    expect(await keysUnder(root)).toEqual([`${root}:kept`]);
  });
});
