/**
 * The handler over the real `FileSystemStore`: concurrency rules that only a store with real
 * asynchronous I/O can break, and the rule that no host path or stack trace reaches the model.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFileSystemStore, createMemoryTool, type FileSystemStore } from '@baton/core';

let directory: string | undefined;
let store: FileSystemStore | undefined;
afterEach(async () => {
  await store?.close();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  store = undefined;
  directory = undefined;
});

async function setup() {
  directory = await mkdtemp(join(tmpdir(), 'baton-handler-fs-'));
  const root = join(directory, 'memories');
  store = await createFileSystemStore({ root });
  return { directory, root, store, tool: createMemoryTool({ store }) };
}

describe('handler over FileSystemStore: concurrent edits never lose an update', () => {
  it('50 parallel inserts on one file keep all 50 lines', async () => {
    const { tool, store } = await setup();
    await tool.execute({ command: 'create', path: '/memories/log.md', file_text: 'header\n' });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        tool.execute({
          command: 'insert',
          path: '/memories/log.md',
          insert_line: 1,
          insert_text: `entry ${index}`,
        }),
      ),
    );
    expect(results.filter((result) => result.isError)).toEqual([]);
    const lines = (await store.read('log.md'))!.split('\n');
    expect(lines).toHaveLength(52);
    expect(new Set(lines.slice(1, -1)).size).toBe(50);
  });

  it('parallel str_replace calls on different lines of one file all land', async () => {
    const { tool, store } = await setup();
    const lines = Array.from({ length: 20 }, (_, index) => `F${index}: "passes": false`);
    await tool.execute({ command: 'create', path: '/memories/f.md', file_text: lines.join('\n') });
    await Promise.all(
      lines.map((line) =>
        tool.execute({
          command: 'str_replace',
          path: '/memories/f.md',
          old_str: line,
          new_str: line.replace('false', 'true'),
        }),
      ),
    );
    expect(await store.read('f.md')).toBe(lines.join('\n').replaceAll('false', 'true'));
  });
});

describe('handler over FileSystemStore: one winner for racing creates and renames', () => {
  it('two concurrent renames onto one destination: exactly one wins, nothing is overwritten', async () => {
    const { tool, store } = await setup();
    await tool.execute({ command: 'create', path: '/memories/one.md', file_text: '1' });
    await tool.execute({ command: 'create', path: '/memories/two.md', file_text: '2' });
    const results = await Promise.all(
      ['one', 'two'].map((name) =>
        tool.execute({
          command: 'rename',
          old_path: `/memories/${name}.md`,
          new_path: '/memories/target.md',
        }),
      ),
    );
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(results.filter((result) => result.isError).map((result) => result.content)).toEqual([
      'Error: The destination /memories/target.md already exists',
    ]);
    const files = (await store.list('', { depth: 1 })).map((entry) => entry.path);
    expect(files).toHaveLength(2);
    expect(files).toContain('target.md');
  });

  it('two concurrent creates of one path: exactly one wins', async () => {
    const { tool, store } = await setup();
    const results = await Promise.all(
      ['first', 'second'].map((file_text) =>
        tool.execute({ command: 'create', path: '/memories/race.md', file_text }),
      ),
    );
    expect(results.filter((result) => !result.isError)).toHaveLength(1);
    expect(results.find((result) => result.isError)?.content).toBe(
      'Error: File /memories/race.md already exists',
    );
    expect(['first', 'second']).toContain(await store.read('race.md'));
  });
});

describe('handler over FileSystemStore: no host path or stack trace ever reaches the model', () => {
  it('answers every command through a symlink escape without leaking the host path', async () => {
    const { directory, root, tool } = await setup();
    const outside = join(directory, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, 'secret.md'), 'secret');
    await symlink(outside, join(root, 'link'));
    await symlink(join(outside, 'secret.md'), join(root, 'file-link.md'));
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' });

    const inputs = [
      { command: 'view', path: '/memories' },
      { command: 'view', path: '/memories/link' },
      { command: 'view', path: '/memories/link/secret.md' },
      { command: 'view', path: '/memories/file-link.md' },
      { command: 'create', path: '/memories/link/new.md', file_text: 'x' },
      { command: 'str_replace', path: '/memories/file-link.md', old_str: 'secret', new_str: 'x' },
      { command: 'insert', path: '/memories/link/secret.md', insert_line: 0, insert_text: 'x' },
      { command: 'delete', path: '/memories/link/secret.md' },
      { command: 'rename', old_path: '/memories/a.md', new_path: '/memories/link/a.md' },
      { command: 'rename', old_path: '/memories/link', new_path: '/memories/b' },
      { command: 'create', path: '/memories/a.md/b.md', file_text: 'x' },
      { command: 'view', path: '/memories/.baton-store' },
    ];
    for (const input of inputs) {
      const result = await tool.execute(input);
      expect(result.content, JSON.stringify(input)).not.toContain(directory);
      expect(result.content, JSON.stringify(input)).not.toContain(tmpdir());
      expect(result.content, JSON.stringify(input)).not.toMatch(/\n\s+at /);
      expect(result.content, JSON.stringify(input)).not.toMatch(/E[A-Z]{3,}:/);
      if (input.path !== '/memories') {
        expect(result.isError, JSON.stringify(input)).toBe(true);
        // A refused link is not the root: the message must not say it is.
        expect(result.content, JSON.stringify(input)).not.toContain('directory itself');
      }
    }
    expect(await readFile(join(outside, 'secret.md'), 'utf8')).toBe('secret');
  });
});
