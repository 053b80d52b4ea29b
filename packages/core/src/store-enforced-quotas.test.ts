/**
 * `quotaEnforcement: 'store'`: the store enforces the store-wide limits atomically, the handler
 * makes no `usage()` call, and each `quota_exceeded` becomes a tool error naming the limit with
 * nothing written.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryTool, memoryStoreLimits } from './memory-tool.js';
import { StoreError, type MemoryStore, type StoreLimits } from './store.js';
import { createInMemoryStore } from './stores/in-memory-store.js';
import { wrapStore } from './testing/wrap-store.js';

function countingUsage(store: MemoryStore): { store: MemoryStore; usageCalls: () => number } {
  let calls = 0;
  const wrapped = wrapStore(store, {
    usage: () => {
      calls += 1;
      return store.usage();
    },
  });
  return { store: wrapped, usageCalls: () => calls };
}

async function setup(storeLimits: StoreLimits) {
  const inner = createInMemoryStore({ limits: storeLimits });
  await inner.write('a.md', 'line one\n', { mode: 'create' });
  const { store, usageCalls } = countingUsage(inner);
  // Handler limits generous: any refusal below comes from the store.
  const tool = createMemoryTool({ store, quotaEnforcement: 'store' });
  return { inner, tool, usageCalls };
}

describe('store-enforced quotas', () => {
  it('the handler makes no usage() call before create, str_replace or insert', async () => {
    const { tool, usageCalls } = await setup({ maxTotalBytes: 1_000, maxFiles: 10 });
    const results = [
      await tool.execute({ command: 'create', path: '/memories/b.md', file_text: 'b\n' }),
      await tool.execute({
        command: 'str_replace',
        path: '/memories/a.md',
        old_str: 'one',
        new_str: 'two',
      }),
      await tool.execute({
        command: 'insert',
        path: '/memories/a.md',
        insert_line: 1,
        insert_text: 'three\n',
      }),
    ];
    expect(results.map((result) => result.isError)).toEqual([false, false, false]);
    expect(usageCalls()).toBe(0);
  });

  it('the default mode still checks usage() in the handler', async () => {
    const inner = createInMemoryStore();
    const { store, usageCalls } = countingUsage(inner);
    const tool = createMemoryTool({ store, limits: { maxFiles: 1 } });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    const refused = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b',
    });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('over the limit of 1 files');
    expect(usageCalls()).toBe(2);
  });

  it('maxFiles from the store names the file limit and writes nothing', async () => {
    const { inner, tool } = await setup({ maxFiles: 1 });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b',
    });
    expect(result).toEqual({
      isError: true,
      content:
        'Error: Cannot write /memories/b.md: the memory directory would go over its limit of 1 files. Nothing was changed; delete files you no longer need.',
    });
    expect(await inner.stat('b.md')).toBeNull();
    expect(await inner.usage()).toEqual({ bytes: 9, files: 1 });
  });

  it('maxTotalBytes from the store names the total limit and writes nothing', async () => {
    const { inner, tool } = await setup({ maxTotalBytes: 12 });
    const create = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'four',
    });
    expect(create).toEqual({
      isError: true,
      content:
        'Error: Cannot write /memories/b.md: the memory directory would go over its limit of 12 bytes in total. Nothing was changed; delete files you no longer need.',
    });
    const insert = await tool.execute({
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 1,
      insert_text: 'more text\n',
    });
    expect(insert.isError).toBe(true);
    expect(insert.content).toContain(
      '/memories/a.md: the memory directory would go over its limit of 12 bytes',
    );
    expect(await inner.read('a.md')).toBe('line one\n');
    expect(await inner.usage()).toEqual({ bytes: 9, files: 1 });
  });

  it('maxFileBytes from the store names the per-file limit and writes nothing', async () => {
    const { inner, tool } = await setup({ maxFileBytes: 10 });
    const result = await tool.execute({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'one',
      new_str: 'one hundred',
    });
    expect(result).toEqual({
      isError: true,
      content:
        'Error: File /memories/a.md would be over the limit of 10 bytes per file. Nothing was changed.',
    });
    expect(await inner.read('a.md')).toBe('line one\n');
  });

  it('quotes the limit from the error field, never from the store sentence', async () => {
    const quoted = wrapStore(createInMemoryStore(), {
      write: () =>
        Promise.reject(
          new StoreError('quota_exceeded', 'Too much.', { limit: 'maxFiles', maximum: 7 }),
        ),
    });
    const fromField = await createMemoryTool({ store: quoted, quotaEnforcement: 'store' }).execute({
      command: 'create',
      path: '/memories/x.md',
      file_text: 'x',
    });
    expect(fromField).toEqual({
      isError: true,
      content:
        'Error: Cannot write /memories/x.md: the memory directory would go over its limit of 7 files. Nothing was changed; delete files you no longer need.',
    });
    const worded = wrapStore(createInMemoryStore(), {
      write: () =>
        Promise.reject(
          new StoreError('quota_exceeded', 'Over the limit of 99 files.', { limit: 'maxFiles' }),
        ),
    });
    const fromSentence = await createMemoryTool({
      store: worded,
      quotaEnforcement: 'store',
    }).execute({ command: 'create', path: '/memories/x.md', file_text: 'x' });
    expect(fromSentence.content).not.toContain('99');
    expect(fromSentence.content).toContain('would go over its limit on the number of files');
  });

  it('a store error without maximum still gives a message naming the limit', async () => {
    const cases: Array<[StoreError['limit'], string]> = [
      ['maxFileBytes', "over the memory store's size limit per file"],
      ['maxTotalBytes', 'would go over its limit on total size'],
      ['maxFiles', 'would go over its limit on the number of files'],
      [undefined, 'the memory store refused it as over a limit'],
    ];
    for (const [limit, expected] of cases) {
      const store = wrapStore(createInMemoryStore(), {
        write: () => Promise.reject(new StoreError('quota_exceeded', 'Too much.', { limit })),
      });
      const tool = createMemoryTool({ store, quotaEnforcement: 'store' });
      const result = await tool.execute({
        command: 'create',
        path: '/memories/x.md',
        file_text: 'x',
      });
      expect(result.isError).toBe(true);
      expect(result.content).toContain(expected);
      expect(result.content).toContain('/memories/x.md');
      expect(result.content).toContain('Nothing was changed');
    }
  });

  it('memoryStoreLimits gives the store the tool limits, Infinity as unlimited', () => {
    expect(memoryStoreLimits()).toEqual({
      maxFileBytes: 1_048_576,
      maxTotalBytes: 52_428_800,
      maxFiles: 1_000,
    });
    expect(memoryStoreLimits({ maxFiles: Infinity, maxTotalBytes: 5 })).toEqual({
      maxFileBytes: 1_048_576,
      maxTotalBytes: 5,
    });
  });

  it('rejects an unknown quotaEnforcement at construction', () => {
    const store = createInMemoryStore();
    expect(() =>
      createMemoryTool({ store, quotaEnforcement: 'stroe' as unknown as 'store' }),
    ).toThrow(/quotaEnforcement/);
  });
});
