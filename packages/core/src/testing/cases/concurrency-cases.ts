import { expect } from 'vitest';
import { isStoreError } from '../../store.js';
import { seed, type ConformanceGroup } from '../harness.js';

const RENAMERS = 20;
const EDITORS = 50;

/** Races that must have exactly one winner or lose nothing. */
export const concurrencyCases: ConformanceGroup = {
  name: 'concurrency',
  cases: [
    {
      name: `exactly one of ${RENAMERS} concurrent file renames onto one destination wins and no source is lost`,
      run: async (store) => {
        const sources = Array.from({ length: RENAMERS }, (_, index) => `src/file-${index}.md`);
        await seed(
          store,
          Object.fromEntries(sources.map((path, index) => [path, `content ${index}`])),
        );
        const results = await Promise.allSettled(
          sources.map((path) => store.rename(path, 'dest.md')),
        );
        const winners = results.flatMap((result, index) =>
          result.status === 'fulfilled' ? [index] : [],
        );
        expect(winners).toHaveLength(1);
        for (const result of results) {
          if (result.status === 'rejected')
            expect(isStoreError(result.reason, 'exists')).toBe(true);
        }
        const winner = winners[0] ?? -1;
        expect(await store.read('dest.md')).toBe(`content ${winner}`);
        for (const [index, path] of sources.entries()) {
          expect(await store.read(path)).toBe(index === winner ? null : `content ${index}`);
        }
        expect(await store.usage()).toMatchObject({ files: RENAMERS });
      },
    },
    {
      name: `exactly one of ${RENAMERS} concurrent directory renames onto one destination wins and nothing is lost`,
      run: async (store) => {
        const sources = Array.from({ length: RENAMERS }, (_, index) => `dir-${index}`);
        await seed(
          store,
          Object.fromEntries(
            sources.map((path, index) => [`${path}/inner/file.md`, `content ${index}`]),
          ),
        );
        const results = await Promise.allSettled(sources.map((path) => store.rename(path, 'dest')));
        const winners = results.flatMap((result, index) =>
          result.status === 'fulfilled' ? [index] : [],
        );
        expect(winners).toHaveLength(1);
        for (const result of results) {
          if (result.status === 'rejected')
            expect(isStoreError(result.reason, 'exists')).toBe(true);
        }
        const winner = winners[0] ?? -1;
        expect(await store.read('dest/inner/file.md')).toBe(`content ${winner}`);
        expect(await store.list('dest', { depth: 5 })).toHaveLength(2);
        for (const [index, path] of sources.entries()) {
          expect(await store.read(`${path}/inner/file.md`)).toBe(
            index === winner ? null : `content ${index}`,
          );
        }
      },
    },
    {
      name: `${EDITORS} concurrent edits appending a line each keep all ${EDITORS} lines`,
      run: async (store) => {
        await seed(store, { 'log.md': 'start\n' });
        await Promise.all(
          Array.from({ length: EDITORS }, (_, index) =>
            store.edit('log.md', (current) => `${current}line ${index}\n`),
          ),
        );
        const lines = (await store.read('log.md'))?.split('\n').filter((line) => line !== '') ?? [];
        expect(lines[0]).toBe('start');
        expect(lines).toHaveLength(EDITORS + 1);
        expect(new Set(lines.slice(1))).toEqual(
          new Set(Array.from({ length: EDITORS }, (_, index) => `line ${index}`)),
        );
      },
    },
    {
      name: 'concurrent edits of different files do not interfere',
      run: async (store) => {
        await seed(store, { 'a.md': '', 'b.md': '' });
        await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            store.edit(index % 2 === 0 ? 'a.md' : 'b.md', (current) => `${current}${index},`),
          ),
        );
        expect((await store.read('a.md'))?.split(',').filter(Boolean)).toHaveLength(10);
        expect((await store.read('b.md'))?.split(',').filter(Boolean)).toHaveLength(10);
      },
    },
    {
      name: 'exactly one of 20 concurrent create-mode writes of one path wins',
      run: async (store) => {
        const results = await Promise.allSettled(
          Array.from({ length: 20 }, (_, index) =>
            store.write('same.md', `writer ${index}`, { mode: 'create' }),
          ),
        );
        const winners = results.flatMap((result, index) =>
          result.status === 'fulfilled' ? [index] : [],
        );
        expect(winners).toHaveLength(1);
        for (const result of results) {
          if (result.status === 'rejected')
            expect(isStoreError(result.reason, 'exists')).toBe(true);
        }
        expect(await store.read('same.md')).toBe(`writer ${winners[0] ?? -1}`);
        expect(await store.usage()).toMatchObject({ files: 1 });
      },
    },
    {
      name: 'concurrent overwrites leave one complete version, never a mix',
      run: async (store) => {
        const versions = Array.from({ length: 10 }, (_, index) => String(index).repeat(20_000));
        await seed(store, { 'big.md': 'initial' });
        await Promise.all(
          versions.map((content) => store.write('big.md', content, { mode: 'overwrite' })),
        );
        expect(versions).toContain(await store.read('big.md'));
        expect(await store.usage()).toEqual({ bytes: 20_000, files: 1 });
      },
    },
  ],
};
