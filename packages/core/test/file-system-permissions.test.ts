import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileSystemStore } from '@baton/core';

const mode = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

describe('FileSystemStore permissions: files 0600, directories 0700', () => {
  let directory: string;
  let previousUmask: number;

  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'baton-fs-perm-'));
    previousUmask = process.umask();
  });

  afterEach(async () => {
    process.umask(previousUmask);
    await rm(directory, { recursive: true, force: true });
  });

  // The most permissive umask and one that would strip the owner's write bit: modes must come
  // from the store, not from the environment.
  for (const umask of [0o000, 0o277]) {
    it(`creates a missing root with mode 0700 (umask ${umask.toString(8)})`, async () => {
      process.umask(umask);
      const root = join(directory, 'a', 'memories');
      const store = await createFileSystemStore({ root });
      expect(await mode(root)).toBe(0o700);
      await store.close();
    });

    it(`writes files 0600 and parent directories 0700, on create, overwrite, edit and rename (umask ${umask.toString(8)})`, async () => {
      process.umask(umask);
      const root = join(directory, 'memories');
      const store = await createFileSystemStore({ root });
      await store.write('one/two/file.md', 'x', { mode: 'create' });
      expect(await mode(join(root, 'one'))).toBe(0o700);
      expect(await mode(join(root, 'one', 'two'))).toBe(0o700);
      expect(await mode(join(root, 'one', 'two', 'file.md'))).toBe(0o600);
      await store.write('one/two/file.md', 'y', { mode: 'overwrite' });
      expect(await mode(join(root, 'one', 'two', 'file.md'))).toBe(0o600);
      await store.edit('one/two/file.md', (current) => `${current}z`);
      expect(await mode(join(root, 'one', 'two', 'file.md'))).toBe(0o600);
      await store.rename('one/two/file.md', 'three/four/file.md');
      expect(await mode(join(root, 'three'))).toBe(0o700);
      expect(await mode(join(root, 'three', 'four', 'file.md'))).toBe(0o600);
      expect(await mode(join(root, '.baton-store'))).toBe(0o700);
      await store.close();
    });
  }
});
