import { describe, expect, it } from 'vitest';
import { createInMemoryStore, type MemoryStore } from '@baton/core';
import { describeMemoryStoreConformance, wrapStore } from '@baton/core/testing';
import { CONFORMANCE_GROUPS } from '../src/testing/conformance.js';

/** Runs one conformance case by name against `store` and reports whether it passed. */
async function casePasses(caseName: string, store: MemoryStore): Promise<boolean> {
  const testCase = CONFORMANCE_GROUPS.flatMap((group) => group.cases).find(
    (candidate) => candidate.name === caseName,
  );
  if (testCase === undefined) throw new Error(`no case named ${caseName}`);
  try {
    await testCase.run(store);
    return true;
  } catch {
    return false;
  }
}

/** A store whose `edit` reads, yields, then writes: the classic lost update. */
function lossyEditStore(): MemoryStore {
  const inner = createInMemoryStore();
  return wrapStore(inner, {
    edit: async (path: string, transform: (current: string) => string) => {
      const before = (await inner.read(path)) ?? '';
      await new Promise((resolve) => setImmediate(resolve));
      const after = transform(before);
      await inner.write(path, after, { mode: 'overwrite' });
      return { before, after };
    },
  });
}

/** A store whose rename checks the destination, yields, then moves: two renamers can both win. */
function racyRenameStore(): MemoryStore {
  const inner = createInMemoryStore();
  return wrapStore(inner, {
    rename: async (from: string, to: string) => {
      const existing = await inner.stat(to);
      await new Promise((resolve) => setImmediate(resolve));
      if (existing !== null) return inner.rename(from, to);
      const content = await inner.read(from);
      await inner.delete(from);
      await inner.write(to, content ?? '', { mode: 'overwrite' });
    },
  });
}

describe('the conformance suite catches broken stores', () => {
  it('fails a store that loses concurrent edits', async () => {
    expect(
      await casePasses(
        '50 concurrent edits appending a line each keep all 50 lines',
        lossyEditStore(),
      ),
    ).toBe(false);
    expect(
      await casePasses(
        '50 concurrent edits appending a line each keep all 50 lines',
        createInMemoryStore(),
      ),
    ).toBe(true);
  });

  it('fails a store whose concurrent renames can both win', async () => {
    const name =
      'exactly one of 20 concurrent file renames onto one destination wins and no source is lost';
    expect(await casePasses(name, racyRenameStore())).toBe(false);
    expect(await casePasses(name, wrapStore(createInMemoryStore(), {}))).toBe(true);
  });

  it('fails a store that ignores limits', async () => {
    expect(
      await casePasses(
        'maxFileBytes refuses an oversized create with quota_exceeded and changes nothing',
        createInMemoryStore(),
      ),
    ).toBe(false);
  });

  it('refuses to skip a case name that does not exist', () => {
    expect(() =>
      describeMemoryStoreConformance('nothing', () => Promise.reject(new Error('never called')), {
        skip: ['no such case'],
      }),
    ).toThrow(/Unknown conformance case names in skip: no such case/);
  });
});
