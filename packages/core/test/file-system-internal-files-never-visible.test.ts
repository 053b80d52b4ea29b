import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FILE_SYSTEM_STORE_RESERVED_NAME, isStoreError } from '@baton/core';
import { createFixture, type FileSystemFixture } from './file-system-helpers.js';

describe("FileSystemStore keeps its own files (temp files, trash, locks) out of the user's reach", () => {
  let fixture: FileSystemFixture;

  beforeEach(async () => {
    fixture = await createFixture();
  });

  afterEach(async () => {
    await fixture.cleanup();
  });

  it('never lists the reserved directory, with or without skipHidden', async () => {
    const { store } = fixture;
    await store.write('a.md', 'a', { mode: 'create' });
    expect(await readdir(fixture.root)).toContain(FILE_SYSTEM_STORE_RESERVED_NAME);
    for (const skipHidden of [true, false]) {
      const paths = (await store.list('', { depth: 10, skipHidden })).map((entry) => entry.path);
      expect(paths).toEqual(['a.md']);
    }
  });

  it('refuses every path below the reserved name with invalid_path', async () => {
    const { store } = fixture;
    const reserved = FILE_SYSTEM_STORE_RESERVED_NAME;
    const attempts: Array<() => Promise<unknown>> = [
      () => store.read(`${reserved}/store.lock`),
      () => store.read(`${reserved}/generation`),
      () => store.stat(reserved),
      () => store.list(`${reserved}/tmp`, { depth: 1 }),
      () => store.write(`${reserved}/tmp/x`, 'x', { mode: 'create' }),
      () => store.write(reserved, 'x', { mode: 'create' }),
      () => store.edit(`${reserved}/generation`, () => 'x'),
      () => store.delete(reserved),
      () => store.rename(reserved, 'stolen'),
      () => store.rename('a.md', `${reserved}/a.md`),
    ];
    await store.write('a.md', 'a', { mode: 'create' });
    for (const attempt of attempts) {
      const error: unknown = await attempt().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isStoreError(error, 'invalid_path')).toBe(true);
    }
    // A look-alike name is an ordinary name.
    await store.write(`${reserved}-notes/a.md`, 'ok', { mode: 'create' });
    await store.write(`dir/${reserved}`, 'ok', { mode: 'create' });
    expect(await store.read(`dir/${reserved}`)).toBe('ok');
  });

  it('shows no temp file in listings taken while writes are in flight', async () => {
    const { store } = fixture;
    const content = 'x'.repeat(200_000);
    const writes = Array.from({ length: 20 }, (_, index) =>
      store.write(`file-${index}.md`, content, { mode: 'create' }),
    );
    const seen = new Set<string>();
    const listings = Array.from({ length: 20 }, async () => {
      for (const entry of await store.list('', { depth: 3 })) seen.add(entry.path);
    });
    await Promise.all([...writes, ...listings]);
    for (const path of seen) expect(path).toMatch(/^file-\d+\.md$/);
    expect(await readdir(join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME, 'tmp'))).toEqual([]);
  });

  it('recreates its own directory if someone deletes it while the store is open', async () => {
    const { store } = fixture;
    await store.write('a.md', 'a', { mode: 'create' });
    await rm(join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME), { recursive: true });
    await store.write('b.md', 'b', { mode: 'create' });
    await store.edit('a.md', (current) => `${current}!`);
    await rm(join(fixture.root, FILE_SYSTEM_STORE_RESERVED_NAME, 'tmp'), { recursive: true });
    await store.delete('b.md');
    await store.write('dir/c.md', 'c', { mode: 'create' });
    await store.delete('dir');
    expect(await store.read('a.md')).toBe('a!');
    expect((await store.list('', { depth: 2 })).map((entry) => entry.path)).toEqual(['a.md']);
  });
});
