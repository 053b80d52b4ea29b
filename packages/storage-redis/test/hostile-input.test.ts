import { createMemoryTool } from '@baton/core';
import { HOSTILE_MEMORY_PATHS } from '@baton/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTestStores, openTestStore } from './helpers.js';

afterEach(cleanupTestStores);

// The handler's own hostile-path cases (from @baton/core/testing, so this list cannot drift from
// the path policy's tests), run through the real handler on a Redis store: every command must
// refuse them and the namespace must not change.
const HOSTILE_PATHS = HOSTILE_MEMORY_PATHS.map((hostile) => hostile.path);

describe('hostile input through the memory tool on Redis', () => {
  it('refuses every hostile path for every command and writes nothing', async () => {
    const store = openTestStore();
    await store.write('progress.md', 'safe', { mode: 'create' });
    const tool = createMemoryTool({ store });
    const before = { usage: await store.usage(), changes: (await store.readChanges()).length };
    const refusedCommands = HOSTILE_PATHS.flatMap((path) => [
      { command: 'view', path },
      { command: 'create', path, file_text: 'x' },
      { command: 'str_replace', path, old_str: 'safe', new_str: 'owned' },
      { command: 'insert', path, insert_line: 0, insert_text: 'x' },
      { command: 'delete', path },
      { command: 'rename', old_path: path, new_path: '/memories/moved.md' },
      { command: 'rename', old_path: '/memories/progress.md', new_path: path },
    ]);
    for (const input of refusedCommands) {
      const result = await tool.execute(input);
      expect(result.isError, JSON.stringify(input)).toBe(true);
    }
    // The root itself may not be deleted or renamed.
    expect((await tool.execute({ command: 'delete', path: '/memories' })).isError).toBe(true);
    expect(
      (await tool.execute({ command: 'rename', old_path: '/memories', new_path: '/memories/x' }))
        .isError,
    ).toBe(true);
    expect(await store.usage()).toEqual(before.usage);
    expect((await store.readChanges()).length).toBe(before.changes);
    expect(await store.read('progress.md')).toBe('safe');
  });

  it('keeps a brace in a file name inside the namespace (the hash tag cannot be escaped)', async () => {
    const store = openTestStore();
    const tool = createMemoryTool({ store });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/{other-namespace}/x.md',
      file_text: 'x',
    });
    expect(result.isError).toBe(false);
    expect(store.keys.file('{other-namespace}/x.md').startsWith(store.keys.base)).toBe(true);
    expect(await store.list('', { depth: 2 })).toMatchObject([
      { path: '{other-namespace}' },
      { path: '{other-namespace}/x.md' },
    ]);
  });
});

describe('file content cannot pose as the version a body starts with', () => {
  // A body is the version padded to 40 bytes, then the content. Content that looks like a header
  // (a forged version, padding, NUL, newlines) must come back byte for byte and never change
  // which version a store thinks it read, small (a script argument) or large (staged).
  const forgedVersion = '9999999999999999:1';
  const forged = `${forgedVersion.padEnd(40, ' ')}owned\0\r\n`;
  for (const [size, content] of [
    ['small', forged],
    ['large', forged + 'x'.repeat(40_000)],
  ] as const) {
    it(`${size}: reads back verbatim, history lists the real version, and an edit commits on it`, async () => {
      const writer = openTestStore();
      await writer.write('canary.md', content, { mode: 'create' });
      const reader = openTestStore({ namespace: writer.namespace });
      expect(await reader.read('canary.md')).toBe(content);
      expect(await writer.read('canary.md')).toBe(content);
      const versions = await reader.listHistory('canary.md');
      expect(versions.map((entry) => entry.version)).not.toContain(forgedVersion);
      expect(versions[0]?.bytes).toBe(Buffer.byteLength(content));
      // An edit from a store that read it commits on the real version: the content is intact.
      await reader.edit('canary.md', (current) => `${current}!`);
      expect(await openTestStore({ namespace: writer.namespace }).read('canary.md')).toBe(
        `${content}!`,
      );
    });
  }
});
