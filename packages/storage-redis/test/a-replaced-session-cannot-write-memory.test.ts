import { isStoreError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisMemoryStore, type RedisMemoryStore } from '../src/index.js';
import { REDIS_URL, cleanupTestStores, openTestStore, randomNamespace } from './helpers.js';

const fenced: RedisMemoryStore[] = [];

/** A store of `namespace` whose writes present `token`; counts the refusals it was told of. */
function fencedStore(
  namespace: string,
  token: number,
): { store: RedisMemoryStore; refusals: () => number } {
  let refusals = 0;
  const store = createRedisMemoryStore({
    url: REDIS_URL,
    namespace,
    fence: { token, onFenced: () => (refusals += 1) },
  });
  fenced.push(store);
  return { store, refusals: () => refusals };
}

afterEach(async () => {
  for (const store of fenced.splice(0)) await store.close();
  await cleanupTestStores();
});

describe('fencing tokens on the memory store', () => {
  it('refuses every mutation of a session once a newer one claimed the namespace, and tells it', async () => {
    const namespace = randomNamespace();
    // Cleans the namespace up afterwards through the public API.
    const reader = openTestStore({ namespace });
    const old = fencedStore(namespace, 1);
    await old.store.claimFence();
    await old.store.write('progress.md', 'session 1\n', { mode: 'create' });
    await old.store.write('notes.md', 'old notes\n', { mode: 'create' });

    const replacement = fencedStore(namespace, 2);
    await replacement.store.claimFence();

    const attempts: [string, () => Promise<unknown>][] = [
      ['overwrite', () => old.store.write('progress.md', 'late end note\n', { mode: 'overwrite' })],
      ['create', () => old.store.write('late.md', 'x', { mode: 'create' })],
      ['edit', () => old.store.edit('progress.md', (content) => `${content}late\n`)],
      ['delete', () => old.store.delete('notes.md')],
      ['rename', () => old.store.rename('notes.md', 'moved.md')],
      ['claim', () => old.store.claimFence()],
    ];
    for (const [what, attempt] of attempts) {
      const error = await attempt().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isStoreError(error, 'unavailable'), what).toBe(true);
      expect((error as Error).message, what).toMatch(/no longer holds the project/);
    }
    expect(old.refusals()).toBe(attempts.length);
    expect(await reader.read('progress.md')).toBe('session 1\n');
    expect(await reader.read('notes.md')).toBe('old notes\n');
    expect(await reader.read('late.md')).toBeNull();
    expect(await reader.read('moved.md')).toBeNull();

    // The replacement writes, and an unfenced writer (the CLI, `baton run`) is never refused.
    await replacement.store.write('progress.md', 'session 2\n', { mode: 'overwrite' });
    await reader.write('operator.md', 'hello', { mode: 'create' });
    expect(await reader.read('progress.md')).toBe('session 2\n');
    expect(replacement.refusals()).toBe(0);
  });

  it('lets a newer session in by its first write alone, and never lowers the fence', async () => {
    const namespace = randomNamespace();
    const reader = openTestStore({ namespace });
    const third = fencedStore(namespace, 3);
    await third.store.write('a.md', 'three', { mode: 'create' });
    const second = fencedStore(namespace, 2);
    await expect(second.store.write('a.md', 'two', { mode: 'overwrite' })).rejects.toThrow(
      /no longer holds the project/,
    );
    await third.store.write('a.md', 'three again', { mode: 'overwrite' });
    expect(await reader.read('a.md')).toBe('three again');
  });

  it('refuses a token that is not a positive integer', () => {
    expect(() =>
      createRedisMemoryStore({ url: REDIS_URL, namespace: randomNamespace(), fence: { token: 0 } }),
    ).toThrow(/fence.token must be a positive integer/);
  });
});
