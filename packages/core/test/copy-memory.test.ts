import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createInMemoryStore,
  exportMemoryToFolder,
  importMemoryFromFolder,
  type MemoryStore,
  type StoreLimits,
} from '../src/index.js';
import { wrapStore } from '../src/testing/index.js';

const folders: string[] = [];

afterEach(async () => {
  for (const folder of folders.splice(0)) {
    await rm(folder, { recursive: true, force: true });
  }
});

async function tempFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'baton-export-'));
  folders.push(folder);
  return folder;
}

const FILES: Record<string, string> = {
  'progress.md': '# Progress\n\nSession 1: done.\n',
  'features.json': '[{"id":"F1","passes":false}]',
  'notes/deep/ünïcode 👋.md': 'héllo\r\nworld\n',
  '.hidden/secret.md': 'kept too',
};

async function seeded(): Promise<MemoryStore> {
  const store = createInMemoryStore();
  for (const [path, content] of Object.entries(FILES)) {
    await store.write(path, content, { mode: 'create' });
  }
  return store;
}

/** An in-memory store that remembers the command named by every write (what a change feed records). */
function recordingStore(limits: StoreLimits = {}): {
  store: MemoryStore;
  commands: Array<string | undefined>;
} {
  const inner = createInMemoryStore({ limits });
  const commands: Array<string | undefined> = [];
  const store = wrapStore(inner, {
    write: (path, content, options) => {
      commands.push(options.command);
      return inner.write(path, content, options);
    },
  });
  return { store, commands };
}

async function snapshot(store: MemoryStore): Promise<Record<string, string | null>> {
  const result: Record<string, string | null> = {};
  for (const entry of await store.list('', { depth: 100 })) {
    if (entry.kind === 'file') {
      result[entry.path] = await store.read(entry.path);
    }
  }
  return result;
}

describe('export and import of a memory store through a folder', () => {
  it('round-trips every file byte for byte, hidden ones included', async () => {
    const source = await seeded();
    const folder = await tempFolder();
    expect(await exportMemoryToFolder(source, folder)).toMatchObject({ files: 4, skipped: 0 });
    expect(await readFile(join(folder, 'notes/deep/ünïcode 👋.md'), 'utf8')).toBe(
      'héllo\r\nworld\n',
    );
    const { store: target, commands } = recordingStore();
    const result = await importMemoryFromFolder(target, folder);
    expect(result.files).toBe(4);
    expect(await snapshot(target)).toEqual(FILES);
    expect(await target.usage()).toEqual(await source.usage());
    expect(commands).toEqual(['import', 'import', 'import', 'import']);
  });

  it('refuses to import over existing files unless told to overwrite or skip, and writes nothing when refused', async () => {
    const folder = await tempFolder();
    await exportMemoryToFolder(await seeded(), folder);
    const target = createInMemoryStore();
    await target.write('progress.md', 'mine', { mode: 'create' });
    await expect(importMemoryFromFolder(target, folder)).rejects.toMatchObject({ code: 'exists' });
    expect(await target.usage()).toMatchObject({ files: 1 });
    expect(await importMemoryFromFolder(target, folder, { onExisting: 'skip' })).toMatchObject({
      files: 3,
      skipped: 1,
    });
    expect(await target.read('progress.md')).toBe('mine');
    await importMemoryFromFolder(target, folder, { onExisting: 'overwrite' });
    expect(await target.read('progress.md')).toBe(FILES['progress.md']);
  });

  it('stops at the target quota with quota_exceeded', async () => {
    const folder = await tempFolder();
    await exportMemoryToFolder(await seeded(), folder);
    const { store: target } = recordingStore({ maxFiles: 2 });
    await expect(importMemoryFromFolder(target, folder)).rejects.toMatchObject({
      code: 'quota_exceeded',
      limit: 'maxFiles',
    });
    expect(await target.usage()).toMatchObject({ files: 2 });
  });
});
