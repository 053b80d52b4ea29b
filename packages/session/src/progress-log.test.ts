import { createInMemoryStore, type MemoryStore } from '@baton/core';
import { wrapStore } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import {
  readProgressArchives,
  readProgressEntries,
  readProgressLog,
  rollOverProgressLog,
  splitProgressLog,
} from './progress-log.js';

function entry(session: number, words = 30): string {
  return [
    `## Session ${session}`,
    `- ${'did things '.repeat(words).trim()}.`,
    `- Next: F${session + 1}.`,
  ].join('\n');
}

async function logOf(sessions: number, store: MemoryStore): Promise<string[]> {
  const entries = Array.from({ length: sessions }, (_, index) => entry(index + 1));
  await store.write('progress.md', `# Progress log\n\n${entries.join('\n\n')}\n`, {
    mode: 'overwrite',
  });
  return entries;
}

describe('the progress log rolls over into archives and never loses an entry', () => {
  it('splits at ## headings and keeps the title apart', () => {
    const split = splitProgressLog(`# Progress log\n\nnote\n\n${entry(1)}\n\n\n${entry(2)}\n`);
    expect(split.preamble).toBe('# Progress log\n\nnote');
    expect(split.entries.map((item) => [item.session, item.text])).toEqual([
      [1, entry(1)],
      [2, entry(2)],
    ]);
  });

  it('leaves a log under the limit alone', async () => {
    const store = createInMemoryStore();
    await logOf(3, store);
    expect(await rollOverProgressLog(store)).toBeNull();
    expect(await store.stat('progress')).toBeNull();
  });

  it('moves the oldest entries, in order, into archives that each fit one view, and keeps an index and the latest entries', async () => {
    const store = createInMemoryStore();
    const entries = await logOf(200, store);
    const rollover = await rollOverProgressLog(store);
    expect(rollover?.moved).toBeGreaterThan(150);
    const progress = (await store.read('progress.md')) ?? '';
    expect(progress.length).toBeLessThanOrEqual(4_000);
    expect(progress.startsWith('# Progress log\n\nOlder entries are archived')).toBe(true);
    expect(progress).toContain('- /memories/progress/0001.md: sessions 1-');
    expect(progress.trimEnd().endsWith(entries[199]!)).toBe(true);

    const archives = await readProgressArchives(store);
    expect(archives.length).toBeGreaterThan(2);
    for (const archive of archives) {
      const text = (await store.read(archive.storePath)) ?? '';
      // One memory view (16,000 characters with line numbers) shows a whole archive.
      const lines = text.split('\n').length;
      expect(text.length + lines * 7).toBeLessThanOrEqual(16_000);
      expect(progress).toContain(`/memories/${archive.storePath}`);
    }
    // Every entry, exactly once, in order.
    expect((await readProgressEntries(store)).map((item) => item.text)).toEqual(entries);
    expect(await readProgressLog(store)).toBe(`# Progress log\n\n${entries.join('\n\n')}\n`);
  });

  it('appends to the last archive on later rollovers and keeps one index line per archive', async () => {
    const store = createInMemoryStore();
    const entries = await logOf(60, store);
    await rollOverProgressLog(store);
    for (let session = 61; session <= 140; session += 1) {
      entries.push(entry(session));
      await store.edit('progress.md', (current) => `${current.trimEnd()}\n\n${entry(session)}\n`);
      await rollOverProgressLog(store);
    }
    expect((await readProgressEntries(store)).map((item) => item.text)).toEqual(entries);
    const progress = (await store.read('progress.md')) ?? '';
    const archives = await readProgressArchives(store);
    expect(progress.match(/^- \/memories\/progress\/\d+\.md/gm)).toHaveLength(archives.length);
    expect(archives.map((archive) => archive.number)).toEqual(
      archives.map((_, index) => index + 1),
    );
  });

  it('an interrupted rollover (archive written, log not yet shortened) leaves no duplicate', async () => {
    const store = createInMemoryStore();
    const entries = await logOf(100, store);
    const original = (await store.read('progress.md'))!;
    await rollOverProgressLog(store);
    // Put the long log back as if the edit of progress.md never happened.
    await store.write('progress.md', original, { mode: 'overwrite' });
    await rollOverProgressLog(store);
    expect((await readProgressEntries(store)).map((item) => item.text)).toEqual(entries);
  });

  it('an entry added while the rollover runs stays in progress.md', async () => {
    const store = createInMemoryStore();
    const entries = await logOf(100, store);
    let injected = false;
    const racing = wrapStore(store, {
      edit: async (...args: Parameters<MemoryStore['edit']>) => {
        if (!injected) {
          injected = true;
          await store.edit('progress.md', (current) => `${current.trimEnd()}\n\n${entry(101)}\n`);
        }
        return store.edit(...args);
      },
    });
    await rollOverProgressLog(racing);
    expect((await readProgressEntries(store)).map((item) => item.text)).toEqual([
      ...entries,
      entry(101),
    ]);
  });
});
