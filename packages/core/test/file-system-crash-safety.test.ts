import { existsSync, readFileSync, statSync } from 'node:fs';
import { link, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_SYSTEM_STORE_RESERVED_NAME, createFileSystemStore } from '@baton/core';
import {
  createFixture,
  deadPid,
  spawnWorker,
  type FileSystemFixture,
} from './file-system-helpers.js';

describe('FileSystemStore crash safety', () => {
  let fixture: FileSystemFixture;
  let temp: string;

  beforeEach(async () => {
    fixture = await createFixture();
    temp = join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME, 'tmp');
  });

  afterEach(async () => {
    await fixture.cleanup();
  });

  it('a leftover temp file or trash of a dead writer is invisible and removed on the next open', async () => {
    const pid = await deadPid();
    await fixture.store.write('notes.md', 'committed', { mode: 'create' });
    await writeFile(join(temp, `${pid}-abcdef123456.7.tmp`), 'half a wri');
    await mkdir(join(temp, `${pid}-abcdef123456.8.trash`, 'sub'), { recursive: true });
    await writeFile(join(temp, `${pid}-abcdef123456.8.trash`, 'sub', 'old.md'), 'deleted');
    // Visible to nobody while it is there.
    expect((await fixture.store.list('', { depth: 10 })).map((entry) => entry.path)).toEqual([
      'notes.md',
    ]);
    expect(await fixture.store.usage()).toEqual({ bytes: 9, files: 1 });
    const reopened = await createFileSystemStore({ root: fixture.root });
    expect(await readdir(temp)).toEqual([]);
    expect(await reopened.read('notes.md')).toBe('committed');
    await reopened.close();
  });

  it("keeps a live process's temp files when another store opens the same root", async () => {
    const name = `${process.pid}-${'0'.repeat(12)}.1.tmp`;
    const live = `1-${'f'.repeat(12)}.1.tmp`;
    await writeFile(join(temp, live), 'pid 1 is alive');
    await writeFile(join(temp, name), 'an earlier incarnation of this pid');
    await (await createFileSystemStore({ root: fixture.root })).close();
    // Same pid, other nonce: a previous incarnation, removed. pid 1 is alive: kept.
    expect(await readdir(temp)).toEqual([live]);
  });

  it(
    'a writer killed mid-write leaves one complete version and no visible debris',
    { timeout: 90_000 },
    async () => {
      await fixture.store.write('big.md', 'initial', { mode: 'create' });
      const worker = await spawnWorker();
      worker.send({
        task: { root: fixture.root, action: 'overwrite-forever', path: 'big.md', size: 2_000_000 },
      });
      expect(await worker.next()).toMatchObject({ ready: true });
      worker.send('go');
      await worker.next();
      await worker.next();
      worker.process.kill('SIGKILL');
      await worker.exited;
      const reopened = await createFileSystemStore({ root: fixture.root });
      const content = (await reopened.read('big.md')) ?? '';
      expect(content).toHaveLength(2_000_000);
      expect(new Set(content).size).toBe(1);
      expect(await readdir(temp)).toEqual([]);
      expect(await reopened.usage()).toEqual({ bytes: 2_000_000, files: 1 });
      await reopened.close();
    },
  );

  it('a lock file left by a dead process is broken instead of blocking the store', async () => {
    const pid = await deadPid();
    const lock = join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME, 'store.lock');
    await writeFile(lock, `${pid}-abcdef123456`);
    await fixture.store.write('after-crash.md', 'ok', { mode: 'create' });
    expect(await fixture.store.read('after-crash.md')).toBe('ok');
  });

  it("the lock is a hard link to the owner's file while held, and a dead owner's link and file go away", async () => {
    const internal = join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME);
    const lock = join(internal, 'store.lock');
    let seenWhileHeld: { content: string; links: number } | undefined;
    await fixture.store.write('held.md', '', { mode: 'create' });
    await fixture.store.edit('held.md', (current) => {
      // Runs inside the mutation, lock held.
      seenWhileHeld = { content: readFileSync(lock, 'utf8'), links: statSync(lock).nlink };
      return `${current}x`;
    });
    expect(seenWhileHeld?.content).toMatch(/^\d+-[0-9a-f]{12}$/u);
    expect(seenWhileHeld?.links).toBe(2);
    expect(existsSync(lock)).toBe(false);

    // A process killed while holding the lock: its link and its owner file stay behind.
    const dead = `${await deadPid()}-abcdef123456`;
    await writeFile(join(internal, 'owners', dead), dead);
    await link(join(internal, 'owners', dead), lock);
    const live = `1-${'b'.repeat(12)}`;
    await writeFile(join(internal, 'owners', live), live);
    const reopened = await createFileSystemStore({ root: fixture.root });
    expect(await readdir(join(internal, 'owners'))).toContain(live);
    expect(await readdir(join(internal, 'owners'))).not.toContain(dead);
    await reopened.write('after.md', 'ok', { mode: 'create' });
    expect(existsSync(lock)).toBe(false);
    await reopened.close();
  });

  it('a lock file held by a live process makes writers wait, then fail with conflict', async () => {
    const lock = join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME, 'store.lock');
    // pid 1 is alive and not us: the lock is live.
    await writeFile(lock, `1-${'a'.repeat(12)}`);
    const impatient = await createFileSystemStore({ root: fixture.root, lockTimeoutMs: 50 });
    const error: unknown = await impatient
      .write('blocked.md', 'x', { mode: 'create' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'conflict' });
    expect(await impatient.stat('blocked.md')).toBeNull();
    await impatient.close();
  });

  it('a hard link left between link() and unlink() of a create does not count twice', async () => {
    await fixture.store.write('a.md', 'abc', { mode: 'create' });
    const pid = await deadPid();
    await link(join(fixture.root, 'a.md'), join(temp, `${pid}-abcdef123456.3.tmp`));
    const reopened = await createFileSystemStore({ root: fixture.root });
    expect(await reopened.usage()).toEqual({ bytes: 3, files: 1 });
    expect(await reopened.read('a.md')).toBe('abc');
    await reopened.close();
  });
});
