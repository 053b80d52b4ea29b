import { createInMemoryStore, memoryStoreLimits, type MemoryStore } from '@baton/core';
import { wrapStore } from '@baton/core/testing';
import { describe, expect, it } from 'vitest';
import { createSessionMemoryTool } from './memory.js';

/** The store with its methods bound, counting `usage()` calls. */
function countingUsage(store: MemoryStore) {
  let usageCalls = 0;
  const wrapped = wrapStore(store, {
    usage: () => {
      usageCalls += 1;
      return store.usage();
    },
  });
  return { store: wrapped, usageCalls: () => usageCalls };
}

describe('session memory tool quota enforcement', () => {
  it('with quotaEnforcement store, writes make no usage() call and the store limit is reported', async () => {
    const { store, usageCalls } = countingUsage(
      createInMemoryStore({ limits: memoryStoreLimits({ maxFiles: 1 }) }),
    );
    const tool = createSessionMemoryTool({ store, session: 's1', quotaEnforcement: 'store' });
    const first = await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    expect(first.isError).toBe(false);
    const second = await tool.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b',
    });
    expect(second).toEqual({
      isError: true,
      content:
        'Error: Cannot write /memories/b.md: the memory directory would go over its limit of 1 files. Nothing was changed; delete files you no longer need.',
    });
    expect(usageCalls()).toBe(0);
  });

  it('by default the handler checks usage() before each write (safe with a store without limits)', async () => {
    const { store, usageCalls } = countingUsage(createInMemoryStore());
    const tool = createSessionMemoryTool({ store, session: 's1' });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'a' });
    expect(usageCalls()).toBe(1);
  });
});
