/**
 * Hot paths are cheap: each command makes the few store calls it needs and nothing that scans
 * the store. A recording wrapper lists the calls.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryTool, memoryStoreLimits } from './memory-tool.js';
import type { MemoryStore } from './store.js';
import { createInMemoryStore } from './stores/in-memory-store.js';

function recording(store: MemoryStore) {
  const calls: string[] = [];
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const shown = args.map((arg) => (typeof arg === 'function' ? 'fn' : JSON.stringify(arg)));
        calls.push(`${String(key)}(${shown.join(', ')})`);
        return (value as (...values: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: wrapped, calls };
}

async function setup() {
  const inner = createInMemoryStore();
  await inner.write('notes/a.md', 'a\n', { mode: 'create' });
  const { store, calls } = recording(inner);
  // Store-wide quotas off, so the only calls are the command's own.
  const tool = createMemoryTool({ store, limits: { maxTotalBytes: Infinity, maxFiles: Infinity } });
  return { tool, calls };
}

describe('store calls per command', () => {
  it('a file view is one read', async () => {
    const { tool, calls } = await setup();
    await tool.execute({ command: 'view', path: '/memories/notes/a.md' });
    expect(calls).toEqual(['read("notes/a.md")']);
  });

  it('a directory view lists two levels, hidden entries skipped by the store', async () => {
    const { tool, calls } = await setup();
    await tool.execute({ command: 'view', path: '/memories/' });
    expect(calls).toEqual(['read("")', 'stat("")', 'list("", {"depth":2,"skipHidden":true})']);
  });

  it('str_replace and insert are one atomic edit each', async () => {
    const { tool, calls } = await setup();
    await tool.execute({
      command: 'str_replace',
      path: '/memories/notes/a.md',
      old_str: 'a',
      new_str: 'b',
    });
    await tool.execute({
      command: 'insert',
      path: '/memories/notes/a.md',
      insert_line: 0,
      insert_text: 'c',
    });
    expect(calls).toEqual([
      'edit("notes/a.md", fn, {"command":"str_replace"})',
      'edit("notes/a.md", fn, {"command":"insert"})',
    ]);
  });

  it('create is one create-only write when nothing in the handler can refuse it first', async () => {
    const { tool, calls } = await setup();
    await tool.execute({ command: 'create', path: '/memories/b.md', file_text: 'b' });
    expect(calls).toEqual(['write("b.md", "b", {"command":"create","mode":"create"})']);
    // The store's create-only write is the existence check, with the same message.
    const again = await tool.execute({ command: 'create', path: '/memories/b.md', file_text: 'c' });
    expect(again).toEqual({ content: 'Error: File /memories/b.md already exists', isError: true });
  });

  it('create checks existence first when a hook or the size limit could refuse it', async () => {
    const inner = createInMemoryStore();
    await inner.write('b.md', 'b', { mode: 'create' });
    const { store, calls } = recording(inner);
    const hooked = createMemoryTool({
      store,
      limits: { maxTotalBytes: Infinity, maxFiles: Infinity, maxFileBytes: 4 },
      hooks: { beforeWrite: () => 'refused content is never reached' },
    });
    const result = await hooked.execute({
      command: 'create',
      path: '/memories/b.md',
      file_text: 'b',
    });
    expect(result.content).toBe('Error: File /memories/b.md already exists');
    expect(calls).toEqual(['stat("b.md")']);
  });

  it('with store-wide quotas on, writes add one usage() call', async () => {
    const inner = createInMemoryStore();
    const { store, calls } = recording(inner);
    const tool = createMemoryTool({ store });
    await tool.execute({ command: 'create', path: '/memories/b.md', file_text: 'b' });
    expect(calls).toEqual([
      'stat("b.md")',
      'usage()',
      'write("b.md", "b", {"command":"create","mode":"create"})',
    ]);
  });

  it('with the store enforcing quotas, writes make no usage() call', async () => {
    const inner = createInMemoryStore({ limits: memoryStoreLimits() });
    const { store, calls } = recording(inner);
    const tool = createMemoryTool({ store, quotaEnforcement: 'store' });
    await tool.execute({ command: 'create', path: '/memories/b.md', file_text: 'b' });
    await tool.execute({
      command: 'insert',
      path: '/memories/b.md',
      insert_line: 0,
      insert_text: 'a',
    });
    expect(calls).toEqual([
      'write("b.md", "b", {"command":"create","mode":"create"})',
      'edit("b.md", fn, {"command":"insert"})',
    ]);
  });

  it('delete and rename pass the session to the store', async () => {
    const inner = createInMemoryStore();
    await inner.write('a.md', 'a', { mode: 'create' });
    const { store, calls } = recording(inner);
    const tool = createMemoryTool({ store, session: 's-9' });
    await tool.execute({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/b.md',
    });
    await tool.execute({ command: 'delete', path: '/memories/b.md' });
    expect(calls).toEqual([
      'stat("a.md")',
      'rename("a.md", "b.md", {"command":"rename","session":"s-9"})',
      'delete("b.md", {"command":"delete","session":"s-9"})',
    ]);
  });
});
