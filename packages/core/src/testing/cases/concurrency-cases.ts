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
    {
      name: 'an edit racing a delete never brings the file back',
      run: async (store) => {
        await seed(store, { 'doomed.md': 'start\n' });
        const edits = Array.from({ length: 10 }, (_, index) =>
          store.edit('doomed.md', (current) => `${current}edit ${index}\n`),
        );
        const deletion = store.delete('doomed.md');
        const results = await Promise.allSettled([...edits, deletion]);
        expect(results.at(-1)?.status).toBe('fulfilled');
        for (const result of results.slice(0, -1)) {
          if (result.status === 'rejected') {
            expect(isStoreError(result.reason, 'not_found')).toBe(true);
          }
        }
        expect(await store.read('doomed.md')).toBeNull();
        expect(await store.usage()).toEqual({ bytes: 0, files: 0 });
      },
    },
    {
      name: 'a write racing a rename of its directory lands in exactly one place',
      run: async (store) => {
        await seed(store, { 'dir/old.md': 'old' });
        await Promise.all([
          store.rename('dir', 'moved'),
          store.write('dir/new.md', 'new', { mode: 'create' }),
        ]);
        const places = [await store.read('moved/new.md'), await store.read('dir/new.md')];
        expect(places.filter((content) => content === 'new')).toHaveLength(1);
        expect(await store.read('moved/old.md')).toBe('old');
        expect(await store.usage()).toEqual({ bytes: 6, files: 2 });
      },
    },
  ],
};
