import { afterEach, describe, expect, it } from 'vitest';
import { createRedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore, randomNamespace, REDIS_URL } from './helpers.js';

afterEach(cleanupTestStores);

describe('the edit cache never loses an update', () => {
  it('an edit from a stale cached version retries on the stored content', async () => {
    const namespace = randomNamespace();
    const first = openTestStore({ namespace });
    const second = openTestStore({ namespace });
    await first.write('f.md', 'a\n', { mode: 'create' });
    await second.edit('f.md', (current) => `${current}b\n`);
    const result = await first.edit('f.md', (current) => `${current}c\n`);
    expect(result).toEqual({ before: 'a\nb\n', after: 'a\nb\nc\n' });
    expect(await second.read('f.md')).toBe('a\nb\nc\n');
  });

  it('a transform that refuses the cached content is run again on the stored content', async () => {
    const namespace = randomNamespace();
    const first = openTestStore({ namespace });
    const second = openTestStore({ namespace });
    await first.write('f.md', 'old text', { mode: 'create' });
    expect(await first.read('f.md')).toBe('old text');
    await second.write('f.md', 'new text', { mode: 'overwrite' });
    const seen: string[] = [];
    const result = await first.edit('f.md', (current) => {
      seen.push(current);
      if (!current.includes('new')) {
        throw new RangeError('old_str not found');
      }
      return current.replace('new', 'newer');
    });
    expect(seen).toEqual(['old text', 'new text']);
    expect(result.after).toBe('newer text');
  });

  it('versions stay unique after the namespace is cleared, so a cached version cannot match new content', async () => {
    const namespace = randomNamespace();
    const first = openTestStore({ namespace });
    const second = openTestStore({ namespace });
    await first.write('f.md', 'before clear', { mode: 'create' });
    const [versionBefore] = await first.listHistory('f.md');
    await second.clear();
    await second.write('f.md', 'after clear', { mode: 'create' });
    const [versionAfter] = await second.listHistory('f.md');
    expect(versionAfter?.version).not.toBe(versionBefore?.version);
    const result = await first.edit('f.md', (current) => `${current}!`);
    expect(result).toEqual({ before: 'after clear', after: 'after clear!' });
  });

  it('an edit of a file deleted elsewhere fails with not_found even when it was cached', async () => {
    const namespace = randomNamespace();
    const first = openTestStore({ namespace });
    const second = openTestStore({ namespace });
    await first.write('gone.md', 'x', { mode: 'create' });
    await second.delete('gone.md');
    await expect(first.edit('gone.md', (current) => current)).rejects.toMatchObject({
      code: 'not_found',
    });
  });

  it('gives up with conflict after maxEditAttempts lost compare-and-sets, writing nothing', async () => {
    const namespace = randomNamespace();
    const writer = openTestStore({ namespace });
    const impatient = createRedisMemoryStore({ url: REDIS_URL, namespace, maxEditAttempts: 1 });
    try {
      await writer.write('f.md', 'v1', { mode: 'create' });
      expect(await impatient.read('f.md')).toBe('v1');
      await writer.write('f.md', 'v2', { mode: 'overwrite' });
      await expect(impatient.edit('f.md', (current) => `${current}!`)).rejects.toMatchObject({
        code: 'conflict',
      });
      expect(await writer.read('f.md')).toBe('v2');
      // The conflict refreshed nothing stale: the next edit sees the stored content.
      expect(await impatient.edit('f.md', (current) => `${current}!`)).toEqual({
        before: 'v2',
        after: 'v2!',
      });
    } finally {
      await impatient.close();
    }
  });
});
