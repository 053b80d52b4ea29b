import { createMemoryTool } from '@baton/core';
import { createRedisMemoryStore } from '../src/index.js';
import { scripts } from '../src/internal/scripts.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTestStores, openTestStore } from './helpers.js';
import {
  openCommandMonitor,
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

  it('a file read that records its access time is one script call: GET of the body and ZADD of its access time', async () => {
    const store = openTestStore({ accessTimeGranularityMs: 0 });
    await store.write('notes/a.md', 'hello', { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () => store.read('notes/a.md'));
    expect(sent.filter((entry) => entry.source !== 'lua')).toHaveLength(1);
    expect(sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command)).toEqual([
      'get',
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

  it('is one plain GET of the body when this store recorded its access within the granularity', async () => {
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
        command: 'get',
        args: [store.keys.body('notes/a.md')],
        source: expect.any(String),
      },
    ]);
  });

  it('is one read script (GET and ZADD of the access time) from a store that has not seen the file', async () => {
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
      'get',
      'zadd',
    ]);
  });
});

describe('writes: small content in one script call, large content staged so it never passes through Lua', () => {
  const lua = (sent: Sent[]): string[] =>
    sent.filter((entry) => entry.source === 'lua').map((entry) => entry.command);
  const fromClient = (sent: Sent[]): string[] =>
    sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command);
  const SCRIPT = expect.stringMatching(/^eval(sha)?$/u);
  /** The longest argument of any script call. */
  const longestScriptArgument = (sent: Sent[]): number =>
    Math.max(
      ...sent
        .filter((entry) => /^eval(sha)?$/u.test(entry.command))
        .flatMap((entry) => entry.args.slice(1).map((arg) => arg.length)),
    );
  const stagesLeft = async (store: ReturnType<typeof openTestStore>): Promise<string[]> =>
    (await store.redis.scan('0', 'MATCH', `${store.keys.base}w:*`, 'COUNT', 1000))[1];
  /** About 100 KB of text, as a long progress log. */
  const big = Array.from({ length: 3000 }, (_, line) => `line ${line}: progress`).join('\n');

  it('a small create is one script call: it reads the index and usage, then writes meta, index, body, file, access time and feed once each', async () => {
    const store = openTestStore();
    await store.write('notes/first.md', 'x', { mode: 'create' });
    const content = 'hello '.repeat(400);
    const sent = await commandsSentBy(store.keys.base, () =>
      store.write('notes/b.md', content, { mode: 'create' }),
    );
    expect(fromClient(sent)).toEqual([SCRIPT]);
    expect(lua(sent)).toEqual([
      'hget', // the file's entry in its parent's index (absent)
      'hget', // the parent directory's entry (present)
      'hmget', // usage and sequence
      'hset', // usage and sequence, written back together
      'hset', // the parent's index entry
      'set', // the body: version header and content
      'hset', // the file hash: version, header, history sizes
      'zadd', // access time
      'xadd', // change feed
    ]);
    expect(await store.read('notes/b.md')).toBe(content);
  });

  it('a 100 KB create stages the body with a SETEX pipelined before the script, which renames it in place; the content is no script argument', async () => {
    const store = openTestStore();
    await store.write('notes/first.md', 'x', { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () =>
      store.write('notes/big.md', big, { mode: 'create' }),
    );
    expect(fromClient(sent)).toEqual(['setex', SCRIPT]);
    const [stage, seconds, staged] = sent[0]?.args ?? [];
    expect(stage?.startsWith(`${store.keys.base}w:`)).toBe(true);
    expect(seconds).toBe('60');
    // MONITOR escapes the newlines; the body is the blank header, then the content.
    expect(staged?.startsWith(`${' '.repeat(40)}line 0: progress`)).toBe(true);
    expect(longestScriptArgument(sent)).toBeLessThan(100);
    expect(lua(sent)).toEqual([
      'hget',
      'hget',
      'strlen', // the staged body's size, for the quotas
      'hmget',
      'hset',
      'hset',
      'setrange', // the version into the body's header, in place
      'persist', // the body keeps no expiry
      'rename', // the stage becomes the body
      'hset',
      'zadd',
      'xadd',
    ]);
    expect(await fresh(store).read('notes/big.md')).toBe(big);
    expect(await store.redis.ttl(store.keys.body('notes/big.md'))).toBe(-1);
    expect(await stagesLeft(store)).toEqual([]);
  });

  it('large non-ASCII content goes through the stage unchanged, with its UTF-8 size', async () => {
    const store = openTestStore();
    const content = 'é ✓ 😀 line\n'.repeat(4_000);
    expect(content.length).toBeGreaterThan(32 * 1024);
    const sent = await commandsSentBy(store.keys.base, () =>
      store.write('u.md', content, { mode: 'create' }),
    );
    expect(fromClient(sent)).toEqual(['setex', SCRIPT]);
    expect(await fresh(store).read('u.md')).toBe(content);
    expect((await store.stat('u.md'))?.size).toBe(Buffer.byteLength(content));
    expect(await store.usage()).toEqual({ bytes: Buffer.byteLength(content), files: 1 });
  });

  it('refused writes, small and large, leave no stage behind and change nothing', async () => {
    const store = openTestStore({ limits: { maxFileBytes: 50_000 } });
    await store.write('a.md', 'small', { mode: 'create' });
    await expect(store.write('a.md', big, { mode: 'overwrite' })).rejects.toMatchObject({
      code: 'quota_exceeded',
    });
    await expect(store.write('a.md', 'x'.repeat(40_000), { mode: 'create' })).rejects.toMatchObject(
      { code: 'exists' },
    );
    await expect(store.write('a.md', 'other', { mode: 'create' })).rejects.toMatchObject({
      code: 'exists',
    });
    expect(await stagesLeft(store)).toEqual([]);
    expect(await fresh(store).read('a.md')).toBe('small');
  });

  it('a stage that is gone when the script runs is refused as unavailable, and nothing is written', async () => {
    const store = openTestStore();
    await store.write('s.md', 'kept', { mode: 'create' });
    const reply = await scripts.call(
      store.redis,
      'write',
      store.keys.meta,
      store.keys.accessTimes,
      store.keys.feed,
      store.keys.writeStage('never-set'),
      store.keys.childrenPrefix,
      store.keys.filePrefix,
      store.keys.historyPrefix,
      store.keys.keptPrefix,
      store.keys.bodyPrefix,
      's.md',
      'overwrite',
      '',
      '-1',
      '-1',
      '-1',
      '5',
      '100',
      'write',
      '',
      '',
      '',
      '1048576',
      '',
    );
    expect(reply).toEqual([11]);
    expect(await fresh(store).read('s.md')).toBe('kept');
  });

  it('an edit of a 100 KB file keeps a reverse delta of a few bytes in history, not a copy', async () => {
    const store = openTestStore({ historyDepth: 5 });
    await store.write('big.md', big, { mode: 'create' });
    const sent = await commandsSentBy(store.keys.base, () =>
      store.edit('big.md', (current) => current.replace('line 1500:', 'line fifteen hundred:')),
    );
    expect(fromClient(sent)).toEqual(['setex', SCRIPT]);
    expect(longestScriptArgument(sent)).toBeLessThan(200);
    expect(lua(sent)).toEqual([
      'hget',
      'hmget', // version, header, history sizes
      'strlen',
      'hmget',
      'hset',
      'hset',
      'lpush',
      'ltrim',
      'setrange',
      'persist',
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

  it('an overwrite of a version this store did not see keeps the old body by renaming it, never reading it', async () => {
    const store = openTestStore({ historyDepth: 3 });
    await store.write('a.md', big, { mode: 'create' });
    const other = openTestStore({ namespace: store.namespace, historyDepth: 3 });
    const sent = await commandsSentBy(store.keys.base, () =>
      other.write('a.md', 'second', { mode: 'overwrite' }),
    );
    const [version] = (await other.listHistory('a.md')).slice(1).map((entry) => entry.version);
    const scriptCalls = sent.filter((entry) => entry.source === 'lua');
    // The old content is neither read by the script nor sent back to the client.
    expect(scriptCalls.filter((entry) => entry.command === 'get')).toEqual([]);
    expect(scriptCalls).toContainEqual({
      command: 'rename',
      args: [store.keys.body('a.md'), store.keys.kept(version ?? '')],
      source: 'lua',
    });
    const pushed = sent.find((entry) => entry.command === 'lpush')?.args[1] ?? '';
    expect(pushed.length).toBeLessThan(100);
    expect(await other.readHistory('a.md', version ?? '')).toBe(big);
  });

  it('a write Redis has no script for (SCRIPT FLUSH) sends the script again with its source, once, small or staged', async () => {
    // A Redis of its own: SCRIPT FLUSH on the shared one would disturb other tests.
    const server = await startRedisServer();
    const own = await openCommandMonitor(server.url);
    const store = createRedisMemoryStore({ url: server.url, namespace: 'flushed' });
    try {
      await store.write('f.md', 'one', { mode: 'create' });
      await store.redis.script('FLUSH');
      const small = await own.commandsSentBy(store.keys.base, () =>
        store.write('f.md', 'two', { mode: 'overwrite' }),
      );
      expect(fromClient(small)).toEqual(['evalsha', 'eval']);
      await store.redis.script('FLUSH');
      const large = await own.commandsSentBy(store.keys.base, () =>
        store.write('f.md', big, { mode: 'overwrite' }),
      );
      // The stage was still there for the second attempt: the content is not sent twice.
      expect(fromClient(large)).toEqual(['setex', 'evalsha', 'eval']);
      expect(await store.read('f.md')).toBe(big);
      expect((await store.listHistory('f.md')).map((entry) => entry.bytes)).toEqual([
        big.length,
        3,
        3,
      ]);
      expect(await stagesLeft(store)).toEqual([]);
    } finally {
      own.close();
      await store.close();
      await server.stop();
    }
  });
});

/** A store on the same namespace that has read and written nothing (no cache, no fast path). */
function fresh(store: ReturnType<typeof openTestStore>): ReturnType<typeof openTestStore> {
  return openTestStore({ namespace: store.namespace });
}

describe('round trips per operation', () => {
  it('mutations take at most two round trips: create one, edit two cold and one right after a read', async () => {
    const store = openTestStore();
    const clientCalls = (sent: Sent[]): string[] =>
      sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command);
    const create = await commandsSentBy(store.keys.base, () =>
      store.write('m/a.md', 'one', { mode: 'create' }),
    );
    expect(clientCalls(create)).toEqual([expect.stringMatching(/^eval(sha)?$/u)]);
    const cold = openTestStore({ namespace: store.namespace });
    const coldEdit = await commandsSentBy(store.keys.base, () =>
      cold.edit('m/a.md', (current) => `${current} two`),
    );
    // The read script, then the write script.
    expect(clientCalls(coldEdit)).toEqual([
      expect.stringMatching(/^eval(sha)?$/u),
      expect.stringMatching(/^eval(sha)?$/u),
    ]);
    const warmEdit = await commandsSentBy(store.keys.base, async () => {
      await cold.read('m/a.md');
      await cold.edit('m/a.md', (current) => `${current} three`);
    });
    // The read (a plain GET: the commit just recorded the access time), then a single commit.
    expect(clientCalls(warmEdit)).toEqual(['get', expect.stringMatching(/^eval(sha)?$/u)]);
    for (const action of [() => cold.rename('m', 'n'), () => cold.delete('n')]) {
      expect(clientCalls(await commandsSentBy(store.keys.base, action))).toHaveLength(1);
    }
  });
});
