import { createMemoryTool } from '@baton/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTestStores, openTestStore } from './helpers.js';
import { openCommandMonitor, type CommandMonitor, type SentCommand } from '@baton/test-support';

type Sent = SentCommand;

let monitor: CommandMonitor;

beforeAll(async () => {
  monitor = await openCommandMonitor();
});

afterAll(async () => {
  monitor.close();
  await cleanupTestStores();
});

function commandsSentBy(base: string, action: () => Promise<unknown>): Promise<Sent[]> {
  return monitor.commandsSentBy(base, action);
}

describe('a directory view costs O(entries shown)', () => {
  it('sends one script call that reads only the index hashes of the directories shown, never KEYS or SCAN', async () => {
    const store = openTestStore();
    for (let index = 0; index < 30; index += 1) {
      await store.write(`shown/file-${index}.md`, 'x', { mode: 'create' });
      await store.write(`other/deep/file-${index}.md`, 'y', { mode: 'create' });
    }
    await store.write('shown/sub/leaf.md', 'z', { mode: 'create' });
    await store.write('shown/sub/deeper/hidden-by-depth.md', 'z', { mode: 'create' });

    const sent = await commandsSentBy(store.keys.base, () =>
      store.list('shown', { depth: 2, skipHidden: true }),
    );
    const fromClient = sent.filter((entry) => entry.source !== 'lua');
    const fromScript = sent.filter((entry) => entry.source === 'lua');

    expect(fromClient.map((entry) => entry.command)).toEqual([
      expect.stringMatching(/^eval(sha)?$/u),
    ]);
    expect(sent.map((entry) => entry.command)).not.toContain('keys');
    expect(sent.map((entry) => entry.command)).not.toContain('scan');
    // The parent's index to check the directory, then one HGETALL per directory shown.
    expect(fromScript).toEqual([
      { command: 'hget', args: [store.keys.children(''), 'shown'], source: 'lua' },
      { command: 'hgetall', args: [store.keys.children('shown')], source: 'lua' },
      { command: 'hgetall', args: [store.keys.children('shown/sub')], source: 'lua' },
    ]);
  });

  it('a file read that records its access time is one script call: HMGET of the file and ZADD of its access time', async () => {
    const store = openTestStore({ accessTimeGranularityMs: 0 });
    await store.write('notes/a.md', 'hello', { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () => store.read('notes/a.md'));
    expect(sent.filter((entry) => entry.source !== 'lua')).toHaveLength(1);
    expect(sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command)).toEqual([
      'hmget',
      'zadd',
    ]);
  });
});

describe('a file view through the memory tool is one round trip', () => {
  const view = { command: 'view', path: '/memories/notes/a.md' };
  const shown =
    "Here's the content of /memories/notes/a.md with line numbers:\n     1\tone\n     2\ttwo";
  // Quotas are left to the store, as in production wiring: the handler adds no usage() call.
  const toolOver = (store: ReturnType<typeof openTestStore>) =>
    createMemoryTool({
      store,
      limits: { maxTotalBytes: Number.POSITIVE_INFINITY, maxFiles: Number.POSITIVE_INFINITY },
    });

  it('is one plain HMGET of the file when this store recorded its access within the granularity', async () => {
    const store = openTestStore();
    await store.write('notes/a.md', 'one\ntwo\n', { mode: 'create' });
    const tool = toolOver(store);
    let result: unknown;
    const sent = await commandsSentBy(store.keys.base, async () => {
      result = await tool.execute(view);
    });
    expect(result).toEqual({ content: shown, isError: false });
    expect(sent).toEqual([
      {
        command: 'hmget',
        args: [store.keys.file('notes/a.md'), 'c', 'v'],
        source: expect.any(String),
      },
    ]);
  });

  it('is one read script (HMGET and ZADD of the access time) from a store that has not seen the file', async () => {
    const writer = openTestStore();
    await writer.write('notes/a.md', 'one\ntwo\n', { mode: 'create' });
    const cold = openTestStore({ namespace: writer.namespace });
    const tool = toolOver(cold);
    let result: unknown;
    const sent = await commandsSentBy(cold.keys.base, async () => {
      result = await tool.execute(view);
    });
    expect(result).toEqual({ content: shown, isError: false });
    expect(sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command)).toEqual([
      expect.stringMatching(/^eval(sha)?$/u),
    ]);
    expect(sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command)).toEqual([
      'hmget',
      'zadd',
    ]);
  });
});

describe('a write is one script call with no second copy of the file', () => {
  const lua = (sent: Sent[]): string[] =>
    sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command);

  it('a create reads the index and usage, then writes meta, index, file, access time and feed once each', async () => {
    const store = openTestStore();
    await store.write('notes/first.md', 'x', { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () =>
      store.write('notes/b.md', 'hello', { mode: 'create' }),
    );
    expect(sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command)).toEqual([
      expect.stringMatching(/^eval(sha)?$/u),
    ]);
    expect(lua(sent)).toEqual([
      'hget', // the file's entry in its parent's index (absent)
      'hget', // the parent directory's entry (present)
      'hmget', // usage and sequence
      'hset', // usage and sequence, written back together
      'hset', // the parent's index entry
      'hset', // the file: content, version, header, history sizes
      'zadd', // access time
      'xadd', // change feed
    ]);
  });

  it('an edit of a 100 KB file keeps a reverse delta of a few bytes in history, not a copy', async () => {
    const store = openTestStore({ historyDepth: 5 });
    const big = Array.from({ length: 3000 }, (_, line) => `line ${line}: progress`).join('\n');
    await store.write('big.md', big, { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () =>
      store.edit('big.md', (current) => current.replace('line 1500:', 'line fifteen hundred:')),
    );
    expect(sent.filter((entry) => entry.source !== 'lua')).toHaveLength(1);
    expect(lua(sent)).toEqual([
      'hget',
      'hmget',
      'hmget',
      'hset',
      'hset',
      'lpush',
      'ltrim',
      'hset',
      'zadd',
      'xadd',
    ]);
    const pushed = sent.find((entry) => entry.command === 'lpush')?.args[1] ?? '';
    expect(pushed.length).toBeLessThan(200);
    expect(
      await store.readHistory('big.md', (await store.listHistory('big.md'))[1]?.version ?? ''),
    ).toBe(big);
  });

  it('an overwrite of a version this store did not see copies the old content inside Redis only', async () => {
    const store = openTestStore({ historyDepth: 3 });
    await store.write('a.md', 'first', { mode: 'create' });
    const other = openTestStore({ namespace: store.namespace, historyDepth: 3 });
    const sent = await commandsSentBy(store.keys.base, () =>
      other.write('a.md', 'second', { mode: 'overwrite' }),
    );
    // The old content is read by the script (HGET), never sent back to the client.
    expect(lua(sent)).toContain('lpush');
    expect(lua(sent).filter((command) => command === 'hget')).toHaveLength(2);
    expect(
      await other.readHistory('a.md', (await other.listHistory('a.md'))[1]?.version ?? ''),
    ).toBe('first');
  });
});

describe('round trips per operation', () => {
  it('mutations take at most two round trips: create one, edit two cold and one right after a read', async () => {
    const store = openTestStore();
    const clientCalls = (sent: Sent[]): string[] =>
      sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command);
    const create = await commandsSentBy(store.keys.base, () =>
      store.write('m/a.md', 'one', { mode: 'create' }),
    );
    expect(clientCalls(create)).toHaveLength(1);
    const cold = openTestStore({ namespace: store.namespace });
    const coldEdit = await commandsSentBy(store.keys.base, () =>
      cold.edit('m/a.md', (current) => `${current} two`),
    );
    expect(clientCalls(coldEdit)).toHaveLength(2);
    const warmEdit = await commandsSentBy(store.keys.base, async () => {
      await cold.read('m/a.md');
      await cold.edit('m/a.md', (current) => `${current} three`);
    });
    // The read (a plain HMGET: the commit just recorded the access time), then a single commit.
    expect(clientCalls(warmEdit)).toEqual(['hmget', expect.stringMatching(/^eval(sha)?$/u)]);
    for (const action of [() => cold.rename('m', 'n'), () => cold.delete('n')]) {
      expect(clientCalls(await commandsSentBy(store.keys.base, action))).toHaveLength(1);
    }
  });
});
