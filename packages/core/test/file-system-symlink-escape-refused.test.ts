import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStoreError } from '@baton/core';
import { createFixture, type FileSystemFixture } from './file-system-helpers.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (isStoreError(error) ? error.code : `foreign: ${String(error)}`),
  );
}

describe('FileSystemStore never follows a symbolic link', () => {
  let fixture: FileSystemFixture;
  let outside: string;

  beforeEach(async () => {
    fixture = await createFixture();
    outside = join(fixture.directory, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.md'), 'host secret');
    // Planted by someone with shell access to the root: a directory link and a file link.
    await symlink(outside, join(fixture.root, 'escape'));
    await symlink(join(outside, 'secret.md'), join(fixture.root, 'secret-link.md'));
    await fixture.store.write('inside/real.md', 'real', { mode: 'create' });
    await symlink(join(fixture.root, 'inside'), join(fixture.root, 'inner-link'));
  });

  afterEach(async () => {
    await fixture.cleanup();
  });

  it('refuses reads through a link that points outside the root', async () => {
    const { store } = fixture;
    expect(await codeOf(store.read('escape/secret.md'))).toBe('invalid_path');
    expect(await codeOf(store.read('secret-link.md'))).toBe('invalid_path');
    expect(await codeOf(store.stat('escape'))).toBe('invalid_path');
    expect(await codeOf(store.stat('escape/secret.md'))).toBe('invalid_path');
    expect(await codeOf(store.list('escape', { depth: 2 }))).toBe('invalid_path');
  });

  it('refuses writes, edits, deletes and renames through a link and changes nothing outside', async () => {
    const { store } = fixture;
    expect(await codeOf(store.write('escape/new.md', 'x', { mode: 'create' }))).toBe(
      'invalid_path',
    );
    expect(await codeOf(store.write('escape/secret.md', 'x', { mode: 'overwrite' }))).toBe(
      'invalid_path',
    );
    expect(await codeOf(store.write('secret-link.md', 'x', { mode: 'overwrite' }))).toBe(
      'invalid_path',
    );
    expect(await codeOf(store.edit('secret-link.md', () => 'x'))).toBe('invalid_path');
    expect(await codeOf(store.edit('escape/secret.md', () => 'x'))).toBe('invalid_path');
    expect(await codeOf(store.delete('escape/secret.md'))).toBe('invalid_path');
    expect(await codeOf(store.rename('escape/secret.md', 'stolen.md'))).toBe('invalid_path');
    expect(await codeOf(store.rename('inside/real.md', 'escape/planted.md'))).toBe('invalid_path');
    expect(await readdir(outside)).toEqual(['secret.md']);
    expect(await readFile(join(outside, 'secret.md'), 'utf8')).toBe('host secret');
    expect(await store.read('inside/real.md')).toBe('real');
  });

  it('refuses even a link that stays inside the root', async () => {
    expect(await codeOf(fixture.store.read('inner-link/real.md'))).toBe('invalid_path');
  });

  it('leaves links out of listings and usage', async () => {
    const { store } = fixture;
    const paths = (await store.list('', { depth: 5 })).map((entry) => entry.path);
    expect(paths).toEqual(['inside', 'inside/real.md']);
    expect(await store.usage()).toEqual({ bytes: 4, files: 1 });
  });

  it('deletes a directory holding a link without touching the link target', async () => {
    const { store } = fixture;
    await symlink(outside, join(fixture.root, 'inside', 'nested-escape'));
    await store.delete('inside');
    expect(await readFile(join(outside, 'secret.md'), 'utf8')).toBe('host secret');
  });
});
