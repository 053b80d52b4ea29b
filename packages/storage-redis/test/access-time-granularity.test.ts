import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisMemoryStore, type RedisMemoryStore } from '../src/index.js';
import { cleanupTestStores, openTestStore, REDIS_URL } from './helpers.js';
import { openCommandMonitor, type CommandMonitor, type SentCommand } from '@baton/test-support';

let monitor: CommandMonitor;
let probe: Redis;

beforeAll(async () => {
  monitor = await openCommandMonitor();
  probe = new Redis(REDIS_URL);
});

afterAll(async () => {
  monitor.close();
  probe.disconnect();
  await cleanupTestStores();
});

const SCRIPT_CALL = /^eval(sha)?$/u;

/** The commands the store itself sent (not those run inside its scripts). */
function fromClient(sent: SentCommand[]): string[] {
  return sent.filter((entry) => entry.source !== 'lua').map((entry) => entry.command);
}

function accessTime(store: RedisMemoryStore, path: string): Promise<string | null> {
  return probe.zscore(store.keys.accessTimes, path);
}

/** Waits until the Redis server clock has moved past `ms` (condition wait, not a fixed sleep). */
async function serverTimeAfter(ms: number): Promise<void> {
  for (;;) {
    const [seconds, micros] = await probe.time();
    if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > ms) {
      return;
    }
  }
}

/** Waits until the monotonic clock has passed `ms` (`performance.now()` time). */
async function monotonicAfter(ms: number): Promise<void> {
  while (performance.now() <= ms) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('reads record the access time at most once per granularity', () => {
  it('a read soon after this store wrote the file is one GET of its body, with no script and no access-time write', async () => {
    const store = openTestStore();
    await store.write('notes/a.md', 'hello', { mode: 'create' });
    const written = await accessTime(store, 'notes/a.md');
    await serverTimeAfter(Number(written));

    let content: string | null = null;
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      content = await store.read('notes/a.md');
    });
    expect(content).toBe('hello');
    expect(sent).toEqual([
      {
        command: 'get',
        args: [store.keys.body('notes/a.md')],
        source: expect.not.stringMatching(/^lua$/u),
      },
    ]);
    expect(await accessTime(store, 'notes/a.md')).toBe(written);
  });

  it('a read soon after a recorded read takes the fast path too, and an edit uses its version', async () => {
    const store = openTestStore();
    await store.write('b.md', 'one', { mode: 'create' });
    const other = openTestStore({ namespace: store.namespace });
    await other.read('b.md'); // records the access: the script
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      expect(await other.read('b.md')).toBe('one');
      await other.edit('b.md', (current) => `${current} two`);
    });
    // The read is GET alone; the edit is then a single commit (its version came from the read).
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
    expect(await store.read('b.md')).toBe('one two');
  });

  it('with granularity 0 every read runs the script and moves the access time', async () => {
    const store = openTestStore({ accessTimeGranularityMs: 0 });
    await store.write('c.md', 'x', { mode: 'create' });
    let previous = Number(await accessTime(store, 'c.md'));
    for (let round = 0; round < 2; round += 1) {
      await serverTimeAfter(previous);
      const sent = await monitor.commandsSentBy(store.keys.base, () => store.read('c.md'));
      expect(fromClient(sent)).toEqual([expect.stringMatching(SCRIPT_CALL)]);
      const now = Number(await accessTime(store, 'c.md'));
      expect(now).toBeGreaterThan(previous);
      previous = now;
    }
  });

  it('once the granularity has passed, the next read records the access time again', async () => {
    const store = openTestStore({ accessTimeGranularityMs: 50 });
    await store.write('d.md', 'x', { mode: 'create' });
    const writtenAt = performance.now();
    const written = Number(await accessTime(store, 'd.md'));
    await monotonicAfter(writtenAt + 50);
    await serverTimeAfter(written);
    const sent = await monitor.commandsSentBy(store.keys.base, () => store.read('d.md'));
    expect(fromClient(sent)).toEqual([expect.stringMatching(SCRIPT_CALL)]);
    expect(Number(await accessTime(store, 'd.md'))).toBeGreaterThan(written);
  });

  it('rejects a granularity that is not a non-negative integer', () => {
    for (const accessTimeGranularityMs of [-1, 1.5, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() =>
        createRedisMemoryStore({ url: REDIS_URL, namespace: 'unused', accessTimeGranularityMs }),
      ).toThrow(
        new TypeError(
          `accessTimeGranularityMs must be a non-negative integer, got ${accessTimeGranularityMs}.`,
        ),
      );
    }
  });
});

describe('a read on the fast path sees changes made by another store', () => {
  it('a file deleted by another store reads as null: GET finds nothing, the script answers', async () => {
    const store = openTestStore();
    const other = openTestStore({ namespace: store.namespace });
    await store.write('gone.md', 'x', { mode: 'create' });
    await other.delete('gone.md');
    let content: string | null = 'not read';
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      content = await store.read('gone.md');
    });
    expect(content).toBeNull();
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
  });

  it('a file renamed away by another store reads as null; the new path has the content', async () => {
    const store = openTestStore();
    const other = openTestStore({ namespace: store.namespace });
    await store.write('r/a.md', 'moved', { mode: 'create' });
    await other.rename('r/a.md', 'r/b.md');
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      expect(await store.read('r/a.md')).toBeNull();
    });
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
    expect(await store.read('r/b.md')).toBe('moved');
  });

  it('a file replaced by a directory by another store reads as is_directory', async () => {
    const store = openTestStore();
    const other = openTestStore({ namespace: store.namespace });
    await store.write('e/thing', 'file', { mode: 'create' });
    await other.delete('e/thing');
    await other.write('e/thing/inner.md', 'x', { mode: 'create' });
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      await expect(store.read('e/thing')).rejects.toMatchObject({
        code: 'is_directory',
        message: 'e/thing is a directory.',
      });
    });
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
  });

  it('a file rewritten by another store reads the new content', async () => {
    const store = openTestStore();
    const other = openTestStore({ namespace: store.namespace });
    await store.write('w.md', 'old', { mode: 'create' });
    await other.write('w.md', 'new', { mode: 'overwrite' });
    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      expect(await store.read('w.md')).toBe('new');
    });
    // Another version than recorded: read again with the script, which records the access.
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
  });

  it('a file another store moved onto a recorded path, with an older access time, gets its access recorded', async () => {
    const store = openTestStore();
    const other = openTestStore({ namespace: store.namespace });
    await other.write('old.md', 'from long ago', { mode: 'create' });
    const old = Number(await accessTime(store, 'old.md'));
    await serverTimeAfter(old);
    await store.write('target.md', 'recent', { mode: 'create' });
    await other.delete('target.md');
    await other.rename('old.md', 'target.md');
    expect(Number(await accessTime(store, 'target.md'))).toBe(old);
    await serverTimeAfter(old);

    const sent = await monitor.commandsSentBy(store.keys.base, async () => {
      expect(await store.read('target.md')).toBe('from long ago');
    });
    // The version differs from the one this store recorded: read again with the script.
    expect(fromClient(sent)).toEqual(['get', expect.stringMatching(SCRIPT_CALL)]);
    expect(Number(await accessTime(store, 'target.md'))).toBeGreaterThan(old);
  });
});
