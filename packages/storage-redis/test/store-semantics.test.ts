import { isStoreError, type StoreErrorCode } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore, randomNamespace, REDIS_URL } from './helpers.js';

afterEach(cleanupTestStores);

async function codeOf(promise: Promise<unknown>): Promise<StoreErrorCode | 'resolved'> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    if (isStoreError(error)) {
      return error.code;
    }
    throw error;
  }
}

describe('RedisMemoryStore semantics', () => {
  it('create never overwrites, overwrite replaces, parents are created', async () => {
    const store = openTestStore();
    await store.write('notes/a.md', 'one', { mode: 'create' });
    expect(await codeOf(store.write('notes/a.md', 'two', { mode: 'create' }))).toBe('exists');
    expect(await codeOf(store.write('notes', 'x', { mode: 'create' }))).toBe('exists');
    expect(await codeOf(store.write('notes', 'x', { mode: 'overwrite' }))).toBe('is_directory');
    expect(await codeOf(store.write('notes/a.md/b', 'x', { mode: 'create' }))).toBe(
      'not_a_directory',
    );
    expect(await store.read('notes/a.md')).toBe('one');
    await store.write('notes/a.md', 'two', { mode: 'overwrite' });
    expect(await store.read('notes/a.md')).toBe('two');
    expect(await store.stat('notes')).toMatchObject({ kind: 'directory', size: 4096 });
    expect(await store.stat('notes/a.md')).toMatchObject({ kind: 'file', size: 3 });
    expect(await store.stat('missing')).toBeNull();
    expect(await store.stat('')).toMatchObject({ kind: 'directory' });
  });

  it('reads return null for missing files and refuse directories', async () => {
    const store = openTestStore();
    expect(await store.read('nothing.md')).toBeNull();
    await store.write('dir/file.md', 'x', { mode: 'create' });
    expect(await codeOf(store.read('dir'))).toBe('is_directory');
    expect(await codeOf(store.read(''))).toBe('is_directory');
  });

  it('counts sizes in UTF-8 bytes', async () => {
    const store = openTestStore();
    await store.write('u.md', 'héllo 👋', { mode: 'create' });
    expect(await store.read('u.md')).toBe('héllo 👋');
    expect((await store.stat('u.md'))?.size).toBe(Buffer.byteLength('héllo 👋'));
    expect(await store.usage()).toEqual({ bytes: Buffer.byteLength('héllo 👋'), files: 1 });
  });

  it('lists by depth, sorted by path with parents first, optionally without hidden entries', async () => {
    const store = openTestStore();
    for (const path of [
      'b.md',
      'a/x.md',
      'a.txt',
      'a/deep/y.md',
      '.hidden/z.md',
      'node_modules/m.js',
      'a/.secret',
    ]) {
      await store.write(path, path, { mode: 'create' });
    }
    const all = await store.list('', { depth: 2 });
    expect(all.map((entry) => [entry.path, entry.depth])).toEqual([
      ['.hidden', 1],
      ['.hidden/z.md', 2],
      ['a', 1],
      ['a.txt', 1],
      ['a/.secret', 2],
      ['a/deep', 2],
      ['a/x.md', 2],
      ['b.md', 1],
      ['node_modules', 1],
      ['node_modules/m.js', 2],
    ]);
    const visible = await store.list('', { depth: 2, skipHidden: true });
    expect(visible.map((entry) => entry.path)).toEqual(['a', 'a.txt', 'a/deep', 'a/x.md', 'b.md']);
    expect((await store.list('a', { depth: 1 })).map((entry) => entry.path)).toEqual([
      'a/.secret',
      'a/deep',
      'a/x.md',
    ]);
    expect(await codeOf(store.list('b.md', { depth: 1 }))).toBe('not_a_directory');
    expect(await codeOf(store.list('nope', { depth: 1 }))).toBe('not_found');
    expect(await store.list('', { depth: 1, skipHidden: true })).toHaveLength(3);
    expect(await store.list('a', { depth: 0 })).toEqual([]);
  });

  it('deletes files and whole directories, keeping the parent', async () => {
    const store = openTestStore();
    await store.write('d/one.md', '1', { mode: 'create' });
    await store.write('d/sub/two.md', '22', { mode: 'create' });
    await store.write('keep.md', '333', { mode: 'create' });
    await store.delete('d/sub');
    expect(await store.list('d', { depth: 5 })).toMatchObject([{ path: 'd/one.md' }]);
    await store.delete('d/one.md');
    expect(await store.stat('d')).toMatchObject({ kind: 'directory' });
    await store.delete('d');
    expect(await store.usage()).toEqual({ bytes: 3, files: 1 });
    expect(await codeOf(store.delete('d'))).toBe('not_found');
    expect(await codeOf(store.delete(''))).toBe('invalid_path');
  });

  it('renames files and directories without ever overwriting', async () => {
    const store = openTestStore();
    await store.write('src/a.md', 'a', { mode: 'create' });
    await store.write('src/deep/b.md', 'b', { mode: 'create' });
    await store.write('taken.md', 't', { mode: 'create' });
    expect(await codeOf(store.rename('src/a.md', 'taken.md'))).toBe('exists');
    expect(await codeOf(store.rename('src', 'src/deep/inner'))).toBe('into_itself');
    expect(await codeOf(store.rename('src', 'taken.md/x'))).toBe('not_a_directory');
    expect(await codeOf(store.rename('missing', 'x'))).toBe('not_found');
    expect(await codeOf(store.rename('', 'x'))).toBe('invalid_path');
    expect(await codeOf(store.rename('taken.md', ''))).toBe('invalid_path');
    await store.rename('src', 'moved/here');
    expect((await store.list('', { depth: 10 })).map((entry) => entry.path)).toEqual([
      'moved',
      'moved/here',
      'moved/here/a.md',
      'moved/here/deep',
      'moved/here/deep/b.md',
      'taken.md',
    ]);
    expect(await store.read('moved/here/deep/b.md')).toBe('b');
    await store.rename('moved/here/a.md', 'a.md');
    expect(await store.read('a.md')).toBe('a');
    expect(await store.usage()).toEqual({ bytes: 3, files: 3 });
  });

  it('edit applies the transform atomically and propagates its errors', async () => {
    const store = openTestStore();
    await store.write('e.md', 'hello', { mode: 'create' });
    expect(await store.edit('e.md', (current) => `${current} world`)).toEqual({
      before: 'hello',
      after: 'hello world',
    });
    await expect(
      store.edit('e.md', () => {
        throw new RangeError('refused by transform');
      }),
    ).rejects.toThrow(RangeError);
    expect(await store.read('e.md')).toBe('hello world');
    expect(await codeOf(store.edit('nope.md', (current) => current))).toBe('not_found');
    await store.write('dir/f.md', 'x', { mode: 'create' });
    expect(await codeOf(store.edit('dir', (current) => current))).toBe('is_directory');
  });

  it('enforces quotas atomically and writes nothing when refused', async () => {
    const store = openTestStore({ limits: { maxFileBytes: 10, maxTotalBytes: 15, maxFiles: 2 } });
    await store.write('a.md', '0123456789', { mode: 'create' });
    const tooBig = store.write('b.md', '0123456789X', { mode: 'create' });
    await expect(tooBig).rejects.toMatchObject({ code: 'quota_exceeded', limit: 'maxFileBytes' });
    await expect(store.write('b.md', '012345', { mode: 'create' })).rejects.toMatchObject({
      code: 'quota_exceeded',
      limit: 'maxTotalBytes',
    });
    await store.write('b.md', '01234', { mode: 'create' });
    await expect(store.write('c.md', '', { mode: 'create' })).rejects.toMatchObject({
      code: 'quota_exceeded',
      limit: 'maxFiles',
    });
    await expect(store.edit('b.md', (current) => `${current}!`)).rejects.toMatchObject({
      limit: 'maxTotalBytes',
    });
    await store.edit('a.md', () => 'short');
    await store.edit('b.md', (current) => `${current}!`);
    expect(await store.usage()).toEqual({ bytes: 11, files: 2 });
    expect(await store.stat('c.md')).toBeNull();
  });

  it('close releases only what the store opened and is idempotent', async () => {
    const store = openTestStore();
    await store.write('x.md', 'x', { mode: 'create' });
    const other = createRedisMemoryStore({ namespace: store.namespace, redis: store.redis });
    await other.close();
    expect(await store.read('x.md')).toBe('x');
    const closing = createRedisMemoryStore({ namespace: randomNamespace(), url: REDIS_URL });
    await closing.close();
    await closing.close();
    expect(await codeOf(closing.read('x.md'))).toBe('unavailable');
  });
});
