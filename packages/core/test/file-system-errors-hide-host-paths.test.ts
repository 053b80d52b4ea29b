import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '@baton/core';
import { createFixture, type FileSystemFixture } from './file-system-helpers.js';

describe('FileSystemStore error messages never contain a host path', () => {
  let fixture: FileSystemFixture;

  beforeEach(async () => {
    fixture = await createFixture({ maxFileBytes: 100 });
  });

  afterEach(async () => {
    await fixture.cleanup();
  });

  it('hides the root in every error, including raw filesystem failures', async () => {
    const { store } = fixture;
    await store.write('file.md', 'x', { mode: 'create' });
    await store.write('dir/a.md', 'a', { mode: 'create' });
    // ENAMETOOLONG comes from the kernel with the full host path in Node's message.
    const tooLong = 'n'.repeat(300);
    const failures: Array<() => Promise<unknown>> = [
      () => store.write('file.md', 'x', { mode: 'create' }),
      () => store.write('file.md/below', 'x', { mode: 'create' }),
      () => store.write('big.md', 'x'.repeat(101), { mode: 'create' }),
      () => store.write(tooLong, 'x', { mode: 'create' }),
      () => store.read(tooLong),
      () => store.read('dir'),
      () => store.edit('missing.md', () => 'x'),
      () => store.list('file.md', { depth: 1 }),
      () => store.delete('missing'),
      () => store.delete(''),
      () => store.rename('dir', 'dir/inside'),
      () => store.rename('file.md', 'dir'),
      () => store.rename(tooLong, 'x'),
    ];
    for (const failure of failures) {
      const error: unknown = await failure().then(
        () => new Error('expected a failure'),
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(StoreError);
      const text = `${(error as Error).message} ${JSON.stringify((error as Error).cause ?? null)}`;
      expect(text).not.toContain(fixture.directory);
      expect(text).not.toContain('/tmp');
    }
  });

  it('refuses a foreign entry that is neither a file nor a directory, without hanging', async () => {
    execFileSync('mkfifo', [join(fixture.root, 'pipe')]);
    await writeFile(join(fixture.root, 'plain.md'), 'plain');
    const error: unknown = await fixture.store.read('pipe').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_path' });
    expect((error as Error).message).not.toContain(fixture.directory);
    expect(await fixture.store.read('plain.md')).toBe('plain');
    const paths = (await fixture.store.list('', { depth: 1 })).map((entry) => entry.path);
    expect(paths).toEqual(['plain.md']);
  });
});
