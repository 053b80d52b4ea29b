import { isStoreError } from '@baton/core';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTestStores, openTestStore, randomNamespace } from './helpers.js';

afterEach(cleanupTestStores);

/** `items[index % items.length]`, never undefined. */
function pick<T>(items: readonly T[], index: number): T {
  const item = items[index % items.length];
  if (item === undefined) {
    throw new RangeError('empty list');
  }
  return item;
}

describe('no lost update across connections', () => {
  it('50 parallel inserts on one file from 5 separate connections keep all 50', async () => {
    const namespace = randomNamespace();
    const stores = Array.from({ length: 5 }, () => openTestStore({ namespace }));
    await pick(stores, 0).write('log.md', '', { mode: 'create' });
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        pick(stores, index).edit('log.md', (current) => `${current}line ${index}\n`, {
          command: 'insert',
          session: `s${index}`,
        }),
      ),
    );
    const lines = ((await pick(stores, 1).read('log.md')) ?? '').trim().split('\n');
    expect(lines).toHaveLength(50);
    expect(new Set(lines).size).toBe(50);
    const inserts = (await pick(stores, 2).readChanges({ count: 1000 })).filter(
      (change) => change.command === 'insert',
    );
    expect(inserts).toHaveLength(50);
  });
});

describe('rename never overwrites, one winner', () => {
  it('20 concurrent renames onto one destination: exactly one wins and no source is lost', async () => {
    const namespace = randomNamespace();
    const stores = Array.from({ length: 5 }, () => openTestStore({ namespace }));
    for (let index = 0; index < 20; index += 1) {
      await pick(stores, 0).write(`sources/s${index}.md`, `content ${index}`, { mode: 'create' });
    }
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, index) =>
        pick(stores, index).rename(`sources/s${index}.md`, 'target/winner.md'),
      ),
    );
    const winners = outcomes.flatMap((outcome, index) =>
      outcome.status === 'fulfilled' ? [index] : [],
    );
    expect(winners).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        expect(isStoreError(outcome.reason, 'exists')).toBe(true);
      }
    }
    const winner = winners[0] ?? -1;
    expect(await pick(stores, 1).read('target/winner.md')).toBe(`content ${winner}`);
    const remaining = (await pick(stores, 2).list('sources', { depth: 1 })).map(
      (entry) => entry.path,
    );
    expect(remaining).toHaveLength(19);
    expect(remaining).not.toContain(`sources/s${winner}.md`);
    expect(await pick(stores, 3).usage()).toEqual({
      files: 20,
      bytes: expect.any(Number) as number,
    });
  });

  it('concurrent directory renames onto one destination: one winner, every file kept', async () => {
    const namespace = randomNamespace();
    const stores = Array.from({ length: 4 }, () => openTestStore({ namespace }));
    for (let index = 0; index < 8; index += 1) {
      await pick(stores, 0).write(`d${index}/nested/f.md`, `${index}`, { mode: 'create' });
    }
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => pick(stores, index).rename(`d${index}`, 'merged')),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(await pick(stores, 1).usage()).toMatchObject({ files: 8 });
    expect(
      (await pick(stores, 2).list('', { depth: 3 })).filter((entry) => entry.kind === 'file'),
    ).toHaveLength(8);
  });
});
