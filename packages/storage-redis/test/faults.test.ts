import { isStoreError, StoreError } from '@baton/core';
import { startRedisServer, type RedisServer } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisMemoryStore, type RedisMemoryStore } from '../src/index.js';
import { randomNamespace } from './helpers.js';

let server: RedisServer;

// Reconnect every 20 ms so the test does not wait out the production backoff.
const FAST_RECONNECT = { retryStrategy: () => 20 };

beforeAll(async () => {
  server = await startRedisServer({ appendOnly: true });
});

afterAll(async () => {
  await server.stop();
});

/** Resolves when `condition()` holds, checking after every settled write of the stream. */
function until(
  condition: () => boolean,
  onProgress: Set<() => void>,
  timeoutMs = 20_000,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      onProgress.delete(check);
      reject(new Error('condition not reached in time'));
    }, timeoutMs);
    function check(): void {
      if (condition()) {
        clearTimeout(timer);
        onProgress.delete(check);
        resolve();
      }
    }
    onProgress.add(check);
    check();
  });
}

describe('a Redis crash in the middle of a stream of writes', () => {
  it('keeps every acknowledged write, fails the others with unavailable, and recovers without a restart', async () => {
    const store: RedisMemoryStore = createRedisMemoryStore({
      url: server.url,
      namespace: randomNamespace(),
      redisOptions: FAST_RECONNECT,
    });
    await store.write('log.md', '', { mode: 'create' });
    const acknowledgedFiles = new Map<string, string>();
    const acknowledgedLines: string[] = [];
    const failures: unknown[] = [];
    const progress = new Set<() => void>();
    let stop = false;

    const stream = (async () => {
      for (let index = 0; !stop; index += 1) {
        const path = `stream/${index}.md`;
        const line = `line ${index}`;
        try {
          await store.write(path, `content ${index}`, { mode: 'create' });
          acknowledgedFiles.set(path, `content ${index}`);
          await store.edit('log.md', (current) => `${current}${line}\n`, { command: 'insert' });
          acknowledgedLines.push(line);
        } catch (error) {
          failures.push(error);
        }
        for (const check of [...progress]) {
          check();
        }
      }
    })();

    await until(() => acknowledgedFiles.size >= 40, progress);
    await server.kill();
    await until(() => failures.length >= 3, progress);
    const acknowledgedBeforeRestart = acknowledgedFiles.size;
    await server.restart();
    await until(() => acknowledgedFiles.size >= acknowledgedBeforeRestart + 40, progress);
    stop = true;
    await stream;

    for (const failure of failures) {
      expect(failure).toBeInstanceOf(StoreError);
      expect(isStoreError(failure, 'unavailable')).toBe(true);
      expect((failure as StoreError).message).toMatch(/Redis is unavailable/u);
    }
    for (const [path, content] of acknowledgedFiles) {
      expect(await store.read(path)).toBe(content);
    }
    const log = ((await store.read('log.md')) ?? '').split('\n');
    for (const line of acknowledgedLines) {
      expect(log).toContain(line);
    }
    // No script was half-applied: the usage counters match the directory index exactly.
    const usage = await store.usage();
    const files = (await store.list('', { depth: 10 })).filter((entry) => entry.kind === 'file');
    expect(usage).toEqual({
      files: files.length,
      bytes: files.reduce((sum, entry) => sum + entry.size, 0),
    });
    expect(usage.files).toBeGreaterThanOrEqual(acknowledgedFiles.size + 1);
    await store.clear();
    await store.close();
  });

  it('a store whose Redis is down fails fast with unavailable, then works once Redis is back', async () => {
    const store = createRedisMemoryStore({
      url: server.url,
      namespace: randomNamespace(),
      redisOptions: FAST_RECONNECT,
    });
    // Recording every read: reads always run the script (the store above, which just wrote
    // a.md, reads it with plain HMGET + HGET instead). Both paths must fail the same way.
    const recording = createRedisMemoryStore({
      url: server.url,
      namespace: store.namespace,
      redisOptions: FAST_RECONNECT,
      accessTimeGranularityMs: 0,
    });
    await store.write('a.md', 'a', { mode: 'create' });
    await server.kill();
    await expect(store.read('a.md')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^Redis is unavailable while trying to read a\.md/u),
    });
    await expect(recording.read('a.md')).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^Redis is unavailable while trying to read a\.md/u),
    });
    await expect(store.list('', { depth: 1 })).rejects.toMatchObject({ code: 'unavailable' });
    await expect(store.usage()).rejects.toMatchObject({ code: 'unavailable' });
    await server.restart();
    // ioredis reconnects on its own schedule; the first calls after the restart may still fail.
    const deadline = Date.now() + 10_000;
    let value: string | null | undefined;
    while (value === undefined && Date.now() < deadline) {
      value = await store.read('a.md').catch((error: unknown) => {
        if (!isStoreError(error, 'unavailable')) {
          throw error;
        }
        return undefined;
      });
    }
    expect(value).toBe('a');
    await store.clear();
    await store.close();
    await recording.close();
  });
});
