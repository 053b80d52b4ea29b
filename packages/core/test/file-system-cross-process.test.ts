import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFileSystemStore } from '@baton/core';
import {
  createFixture,
  race,
  spawnWorker,
  stopWorkers,
  type ChildWorker,
  type FileSystemFixture,
} from './file-system-helpers.js';

describe('FileSystemStore across processes', () => {
  let fixture: FileSystemFixture;
  let workers: ChildWorker[] = [];

  beforeAll(async () => {
    workers = await Promise.all([spawnWorker(), spawnWorker(), spawnWorker(), spawnWorker()]);
  }, 90_000);

  afterAll(async () => {
    await stopWorkers(workers);
  });

  beforeEach(async () => {
    fixture = await createFixture();
  });

  afterEach(async () => {
    await fixture.cleanup();
  });

  it('concurrent edits from four processes and this one lose no update', async () => {
    await fixture.store.write('log.md', '', { mode: 'create' });
    const racing = race(
      workers,
      ['p1', 'p2', 'p3', 'p4'].map((label) => ({
        root: fixture.root,
        action: 'append' as const,
        path: 'log.md',
        label,
        count: 15,
      })),
    );
    const local = Promise.all(
      Array.from({ length: 15 }, (_, index) =>
        fixture.store.edit('log.md', (current) => `${current}local-${index}\n`),
      ),
    );
    await Promise.all([racing, local]);
    const lines = ((await fixture.store.read('log.md')) ?? '').split('\n').filter(Boolean);
    expect(lines).toHaveLength(75);
    expect(new Set(lines).size).toBe(75);
  });

  it('renames from several processes onto one destination have exactly one winner', async () => {
    const labels = ['a', 'b', 'c', 'd'];
    for (const label of labels) {
      await fixture.store.write(`src-${label}/file.md`, label, { mode: 'create' });
    }
    const outcomes = (await race(
      workers,
      labels.map((label) => ({
        root: fixture.root,
        action: 'rename' as const,
        from: `src-${label}`,
        to: 'dest',
      })),
    )) as Array<{ outcome: string }>;
    const winners = outcomes.filter((result) => result.outcome === 'won');
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((result) => result.outcome === 'exists')).toHaveLength(3);
    const moved = await fixture.store.read('dest/file.md');
    for (const label of labels) {
      expect(await fixture.store.read(`src-${label}/file.md`)).toBe(label === moved ? null : label);
    }
  });

  it('limits hold across processes: maxFiles is never overshot', async () => {
    const results = (await race(
      workers,
      ['p1', 'p2', 'p3', 'p4'].map((label) => ({
        root: fixture.root,
        action: 'create-many' as const,
        label,
        count: 6,
        maxFiles: 12,
      })),
    )) as Array<{ created: number }>;
    expect(results.reduce((sum, result) => sum + result.created, 0)).toBe(12);
    expect(await fixture.store.usage()).toEqual({ bytes: 12, files: 12 });
  });

  it('a store instance sees usage changed by another instance on the same root', async () => {
    const first = await createFileSystemStore({ root: fixture.root, limits: { maxFiles: 2 } });
    const second = await createFileSystemStore({ root: fixture.root, limits: { maxFiles: 2 } });
    await first.write('a.md', 'a', { mode: 'create' });
    expect(await first.usage()).toEqual({ bytes: 1, files: 1 });
    await second.write('b.md', 'b', { mode: 'create' });
    // The lock-free fast path of usage() must notice the other instance's write.
    expect(await first.usage()).toEqual({ bytes: 2, files: 2 });
    const error: unknown = await first
      .write('c.md', 'c', { mode: 'create' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'quota_exceeded', limit: 'maxFiles' });
    await first.close();
    await second.close();
  });
});
