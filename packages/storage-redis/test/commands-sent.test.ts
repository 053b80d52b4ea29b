import { createMemoryTool } from '@baton/core';
import { createRedisMemoryStore } from '../src/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTestStores, openTestStore } from './helpers.js';
import {
  openCommandMonitor,
  roundTrips,
  startRedisServer,
  type CommandMonitor,
  type SentCommand,
} from '@baton/test-support';

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

describe('a write is one round trip whose content never passes through Lua', () => {
  const lua = (sent: Sent[]): string[] =>
    sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command);
  /** MULTI, the content into the write stage, the write script, EXEC. */
  const WRITE = ['multi', 'hset', expect.stringMatching(/^eval(sha)?$/u), 'exec'];
  /** The longest argument of any script call: the content must not be one of them. */
  const longestScriptArgument = (sent: Sent[]): number =>
    Math.max(
      ...sent
        .filter((entry) => /^eval(sha)?$/u.test(entry.command))
        .flatMap((entry) => entry.args.slice(1).map((arg) => arg.length)),
    );

  it('a create stages the content, then the script reads the index and usage and moves the stage into place', async () => {
    const store = openTestStore();
    await store.write('notes/first.md', 'x', { mode: 'create' });
    const content = 'hello '.repeat(400);
    const sent = await commandsSentBy(store.keys.base, () =>
      store.write('notes/b.md', content, { mode: 'create' }),
    );
    expect(roundTrips(sent)).toEqual([WRITE]);
    const staged = sent.find((entry) => entry.command === 'hset' && entry.source !== 'lua');
    expect(staged?.args).toEqual([store.keys.writeStage, 'c', content]);
    expect(longestScriptArgument(sent)).toBeLessThan(100);
    expect(lua(sent)).toEqual([
      'hget', // the file's entry in its parent's index (absent)
      'hget', // the parent directory's entry (present)
      'hstrlen', // the staged content's size, for the quotas
      'hmget', // usage and sequence
      'hset', // usage and sequence, written back together
      'hset', // the parent's index entry
      'rename', // the stage becomes the file hash
      'hset', // the file: version, header, history sizes
      'zadd', // access time
      'xadd', // change feed
    ]);
    expect(await store.read('notes/b.md')).toBe(content);
    expect(await store.redis.exists(store.keys.writeStage)).toBe(0);
  });

  it('a refused write leaves no stage behind and changes nothing', async () => {
    const store = openTestStore({ limits: { maxFileBytes: 10 } });
    await store.write('a.md', 'small', { mode: 'create' });
    await expect(store.write('a.md', 'x'.repeat(11), { mode: 'overwrite' })).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    await expect(store.write('a.md', 'other', { mode: 'create' })).rejects.toMatchObject({
      code: 'exists',
    });
    expect(await store.redis.exists(store.keys.writeStage)).toBe(0);
    expect(await store.read('a.md')).toBe('small');
  });

  it('an edit of a 100 KB file keeps a reverse delta of a few bytes in history, not a copy', async () => {
    const store = openTestStore({ historyDepth: 5 });
    const big = Array.from({ length: 3000 }, (_, line) => `line ${line}: progress`).join('\n');
    await store.write('big.md', big, { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () =>
      store.edit('big.md', (current) => current.replace('line 1500:', 'line fifteen hundred:')),
    );
    expect(roundTrips(sent)).toEqual([WRITE]);
    expect(longestScriptArgument(sent)).toBeLessThan(200);
    expect(lua(sent)).toEqual([
      'hget',
      'hmget',
      'hstrlen',
      'hmget',
      'hset',
      'hset',
      'lpush',
      'ltrim',
      'rename',
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

  it('an overwrite of a version this store did not see keeps the old file hash by renaming it, never reading it', async () => {
    const store = openTestStore({ historyDepth: 3 });
    const first = 'first '.repeat(1000);
    await store.write('a.md', first, { mode: 'create' });
    const other = openTestStore({ namespace: store.namespace, historyDepth: 3 });
    const sent = await commandsSentBy(store.keys.base, () =>
      other.write('a.md', 'second', { mode: 'overwrite' }),
    );
    const [version] = (await other.listHistory('a.md')).slice(1).map((entry) => entry.version);
    const scriptCalls = sent.filter((entry) => entry.source === 'lua');
    // The old content is neither read by the script nor sent back to the client.
    expect(
      scriptCalls.filter(
        (entry) => entry.args[0] === store.keys.file('a.md') && entry.args.includes('c'),
      ),
    ).toEqual([]);
    expect(scriptCalls).toContainEqual({
      command: 'rename',
      args: [store.keys.file('a.md'), store.keys.kept(version ?? '')],
      source: 'lua',
    });
    const pushed = sent.find((entry) => entry.command === 'lpush')?.args[1] ?? '';
    expect(pushed.length).toBeLessThan(100);
    expect(await other.readHistory('a.md', version ?? '')).toBe(first);
  });

  it('a write Redis has no script for (SCRIPT FLUSH) is sent again with the source, once', async () => {
    // A Redis of its own: SCRIPT FLUSH on the shared one would disturb other tests' transactions.
    const server = await startRedisServer();
    const own = await openCommandMonitor(server.url);
    const store = createRedisMemoryStore({ url: server.url, namespace: 'flushed' });
    try {
      await store.write('f.md', 'one', { mode: 'create' });
      await store.redis.script('FLUSH');
      const sent = await own.commandsSentBy(store.keys.base, () =>
        store.write('f.md', 'two', { mode: 'overwrite' }),
      );
      expect(roundTrips(sent)).toEqual([
        ['multi', 'hset', 'evalsha', 'exec'],
        ['multi', 'hset', 'eval', 'exec'],
      ]);
      expect(await store.read('f.md')).toBe('two');
      expect((await store.listHistory('f.md')).map((entry) => entry.bytes)).toEqual([3, 3]);
      expect(await store.redis.exists(store.keys.writeStage)).toBe(0);
    } finally {
      own.close();
      await store.close();
      await server.stop();
    }
  });
});

describe('round trips per operation', () => {
  it('mutations take at most two round trips: create one, edit two cold and one right after a read', async () => {
    const store = openTestStore();
    const clientCalls = roundTrips;
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
    expect(clientCalls(warmEdit)).toEqual([
      ['hmget'],
      ['multi', 'hset', expect.stringMatching(/^eval(sha)?$/u), 'exec'],
    ]);
    for (const action of [() => cold.rename('m', 'n'), () => cold.delete('n')]) {
      expect(clientCalls(await commandsSentBy(store.keys.base, action))).toHaveLength(1);
    }
  });
});
