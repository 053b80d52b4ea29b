import { createMemoryTool, isStoreError } from '@baton/core';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { REDIS_URL, cleanupTestStores, openTestStore } from './helpers.js';

afterEach(cleanupTestStores);
/** The repair an operator makes (the file is gone, its index entry stays), so clear() works. */
const repair = async (key: string) => raw.del(key);
const raw = new Redis(REDIS_URL);
afterAll(async () => {
  await raw.quit();
});

/** What the store threw, or `undefined`. */
async function thrown(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('a memory key holding the wrong type of value (WRONGTYPE)', () => {
  it('is named as damaged data (code corrupt), never as Redis being unavailable', async () => {
    const store = openTestStore();
    await store.write('notes.md', 'one', { mode: 'create' });
    // Something outside the store (a person with redis-cli, another program) replaced the
    // file's hash with a string.
    await raw.set(store.keys.file('notes.md'), 'not a hash');

    for (const call of [
      store.write('notes.md', 'two', { mode: 'overwrite' }),
      store.delete('notes.md'),
    ]) {
      const error = await thrown(call);
      expect(isStoreError(error, 'corrupt'), String(error)).toBe(true);
      const message = (error as Error).message;
      expect(message).toContain('WRONGTYPE');
      expect(message).not.toMatch(/unavailable|try again/i);
    }
    await repair(store.keys.file('notes.md'));
  });

  it('the model reads one plain sentence: no key, no host, no Redis reply', async () => {
    const store = openTestStore();
    await store.write('notes.md', 'one', { mode: 'create' });
    await raw.set(store.keys.file('notes.md'), 'not a hash');
    const tool = createMemoryTool({ store });
    const result = await tool.execute({
      command: 'str_replace',
      path: '/memories/notes.md',
      old_str: 'one',
      new_str: 'two',
    });
    expect(result).toMatchObject({
      isError: true,
      content:
        "Error: The memory store's data for /memories/notes.md is damaged, so str_replace cannot run. Nothing was changed; retrying will not help.",
    });
    const deleted = await tool.execute({ command: 'delete', path: '/memories/notes.md' });
    expect(deleted).toMatchObject({
      isError: true,
      content:
        "Error: The memory store's data for /memories/notes.md is damaged, so delete cannot run. Nothing was changed; retrying will not help.",
    });
    const text = JSON.stringify([result, deleted]);
    expect(text).not.toContain(store.keys.base);
    expect(text).not.toMatch(/WRONGTYPE|127\.0\.0\.1|6379|redis/i);
    await repair(store.keys.file('notes.md'));
  });
});
