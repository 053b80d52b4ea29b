/**
 * Benchmark of the Redis memory store (not a test). Run: `pnpm bench:redis` from the repo root
 * (or `pnpm bench` here). Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 *
 * Prints, in one run: raw ioredis GET/SET round trips (the floor); the store's view (read),
 * create, str_replace and insert (edit) sequentially, with ops/s and p50/p99; the same through
 * the core memory-tool handler; a 2,000-entry directory view; 64 concurrent clients on a mixed
 * workload; and the SDK's filesystem memory tool on the same sequential workload.
 * Environment: BENCH_OPS (sequential ops per command, default 2000), BENCH_SECONDS (duration
 * of the concurrent phase, default 5), BENCH_CLIENTS (default 64), BENCH_CONNECTIONS (default 8).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { createMemoryTool } from '@baton/core';
import { Redis } from 'ioredis';
import { createRedisMemoryStore, type RedisMemoryStore } from '../src/index.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPS = Number(process.env.BENCH_OPS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 64);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 8);
const LISTING_ENTRIES = 2000;
const STORE_LIMITS = { maxFileBytes: 1_048_576, maxTotalBytes: 52_428_800, maxFiles: 10_000 };
const HANDLER_LIMITS = {
  maxTotalBytes: Number.POSITIVE_INFINITY,
  maxFiles: Number.POSITIVE_INFINITY,
};

interface Measurement {
  name: string;
  ops: number;
  opsPerSecond: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Runs `operation(i)` `count` times one after the other and measures each call. */
async function sequential(
  name: string,
  count: number,
  operation: (index: number) => Promise<unknown>,
): Promise<Measurement> {
  const latencies: number[] = [];
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index += 1) {
    const before = process.hrtime.bigint();
    await operation(index);
    latencies.push(Number(process.hrtime.bigint() - before) / 1e6);
  }
  const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
  latencies.sort((left, right) => left - right);
  return {
    name,
    ops: count,
    opsPerSecond: (count / totalMs) * 1000,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

function format(measurement: Measurement, floor?: Measurement): string {
  // Throughput ratio, and the p50 ratio, which is steadier on a busy machine (tails dominate the mean).
  const ratio =
    floor === undefined
      ? ''
      : `  ${(measurement.opsPerSecond / floor.opsPerSecond).toFixed(2)}x ${floor.name} (p50: ${(floor.p50 / measurement.p50).toFixed(2)}x)`;
  return `${measurement.name.padEnd(44)} ${measurement.opsPerSecond.toFixed(0).padStart(8)} ops/s   p50 ${measurement.p50.toFixed(3)} ms   p99 ${measurement.p99.toFixed(3)} ms${ratio}`;
}

function ensure(condition: boolean, message: string): void {
  if (!condition) {
    throw new Error(`benchmark self-check failed: ${message}`);
  }
}

const FILE_TEXT = Array.from(
  { length: 20 },
  (_, line) => `line ${line}: some remembered progress note`,
).join('\n');

/** The sequential memory workload, written once for every implementation. */
interface Workload {
  create(index: number): Promise<unknown>;
  view(index: number): Promise<unknown>;
  strReplace(index: number): Promise<unknown>;
  insert(index: number): Promise<unknown>;
}

async function runWorkload(
  label: string,
  workload: Workload,
  floors: { get: Measurement; set: Measurement },
): Promise<Measurement[]> {
  const results = [
    await sequential(`${label} create`, OPS, (index) => workload.create(index)),
    await sequential(`${label} view (file)`, OPS, (index) => workload.view(index)),
    await sequential(`${label} str_replace`, OPS, (index) => workload.strReplace(index)),
    await sequential(`${label} insert`, OPS, (index) => workload.insert(index)),
  ];
  console.log(format(results[0] as Measurement, floors.set));
  console.log(format(results[1] as Measurement, floors.get));
  console.log(format(results[2] as Measurement, floors.set));
  console.log(format(results[3] as Measurement, floors.set));
  return results;
}

function storeWorkload(store: RedisMemoryStore): Workload {
  return {
    create: (index) =>
      store.write(`bench/f${index}.md`, FILE_TEXT, { mode: 'create', command: 'create' }),
    view: async (index) =>
      ensure((await store.read(`bench/f${index}.md`)) !== null, 'read returned null'),
    strReplace: (index) =>
      store.edit(`bench/f${index}.md`, (current) => current.replace('line 3:', 'line three:'), {
        command: 'str_replace',
      }),
    insert: (index) =>
      store.edit(
        `bench/f${index}.md`,
        (current) => {
          const lines = current.split('\n');
          lines.splice(5, 0, 'inserted line');
          return lines.join('\n');
        },
        { command: 'insert' },
      ),
  };
}

function handlerWorkload(
  execute: (input: unknown) => Promise<{ content: string; isError: boolean }>,
): Workload {
  const run = async (input: unknown): Promise<void> => {
    const result = await execute(input);
    ensure(!result.isError, `${JSON.stringify(input).slice(0, 80)} -> ${result.content}`);
  };
  return {
    create: (index) =>
      run({ command: 'create', path: `/memories/bench/f${index}.md`, file_text: FILE_TEXT }),
    view: (index) => run({ command: 'view', path: `/memories/bench/f${index}.md` }),
    strReplace: (index) =>
      run({
        command: 'str_replace',
        path: `/memories/bench/f${index}.md`,
        old_str: 'line 3:',
        new_str: 'line three:',
      }),
    insert: (index) =>
      run({
        command: 'insert',
        path: `/memories/bench/f${index}.md`,
        insert_line: 5,
        insert_text: 'inserted line\n',
      }),
  };
}

async function rawFloors(client: Redis): Promise<{ get: Measurement; set: Measurement }> {
  const key = `bench-raw:{${randomUUID()}}`;
  await client.set(key, FILE_TEXT);
  const set = await sequential('raw ioredis SET', OPS, () => client.set(key, FILE_TEXT));
  const get = await sequential('raw ioredis GET', OPS, () => client.get(key));
  await client.del(key);
  return { get, set };
}

async function directoryView(store: RedisMemoryStore, client: Redis): Promise<void> {
  const pending: Array<Promise<void>> = [];
  for (let index = 0; index < LISTING_ENTRIES; index += 1) {
    pending.push(
      store.write(`big/entry-${String(index).padStart(4, '0')}.md`, `note ${index}`, {
        mode: 'create',
      }),
    );
    if (pending.length === 64) {
      await Promise.all(pending.splice(0));
    }
  }
  await Promise.all(pending);
  const list = await sequential(`list ${LISTING_ENTRIES}-entry directory (store)`, 50, async () =>
    ensure(
      (await store.list('big', { depth: 2, skipHidden: true })).length === LISTING_ENTRIES,
      'listing size',
    ),
  );
  console.log(`${format(list)}   median ${list.p50.toFixed(2)} ms`);
  const tool = createMemoryTool({ store, limits: { ...HANDLER_LIMITS, maxViewChars: 1_000_000 } });
  const view = await sequential(`view ${LISTING_ENTRIES}-entry directory (handler)`, 50, async () =>
    ensure(
      !(await tool.execute({ command: 'view', path: '/memories/big' })).isError,
      'view failed',
    ),
  );
  console.log(`${format(view)}   median ${view.p50.toFixed(2)} ms`);
  const ping = await sequential('raw ioredis PING (for scale)', 200, () => client.ping());
  console.log(format(ping));
}

async function concurrentMixed(namespaces: string[]): Promise<void> {
  // CLIENTS logical clients over CONNECTIONS connections (ioredis multiplexes; more connections
  // only add syscalls on this 2-core machine). Each client works in its own namespace.
  const connections = Array.from({ length: CONNECTIONS }, () => new Redis(REDIS_URL));
  const stores = Array.from({ length: CLIENTS }, (_, index) => {
    const namespace = `bench-${randomUUID()}`;
    namespaces.push(namespace);
    return createRedisMemoryStore({ redis: connections[index % CONNECTIONS] as Redis, namespace });
  });
  for (const store of stores) {
    for (let file = 0; file < 10; file += 1) {
      await store.write(`mixed/f${file}.md`, FILE_TEXT, { mode: 'create' });
    }
  }
  let operations = 0;
  let stop = false;
  const counts = { read: 0, edit: 0, write: 0, list: 0 };
  const started = process.hrtime.bigint();
  const timer = setTimeout(() => {
    stop = true;
  }, SECONDS * 1000);
  await Promise.all(
    stores.map(async (store, client) => {
      for (let step = client; !stop; step += 1) {
        const file = `mixed/f${step % 10}.md`;
        const kind = step % 10;
        if (kind < 6) {
          await store.read(file);
          counts.read += 1;
        } else if (kind < 8) {
          await store.edit(
            file,
            (current) => (current.length > 4000 ? FILE_TEXT : `${current}\nappended ${step}`),
            {
              command: 'insert',
            },
          );
          counts.edit += 1;
        } else if (kind === 8) {
          await store.write(file, FILE_TEXT, { mode: 'overwrite', command: 'create' });
          counts.write += 1;
        } else {
          await store.list('', { depth: 2, skipHidden: true });
          counts.list += 1;
        }
        operations += 1;
      }
    }),
  );
  clearTimeout(timer);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  console.log(
    `${`${CLIENTS} clients / ${CONNECTIONS} connections, mixed`.padEnd(44)} ${(operations / seconds).toFixed(0).padStart(8)} ops/s aggregate  (60% view file, 20% str_replace/insert, 10% create/overwrite, 10% view dir; ${JSON.stringify(counts)})`,
  );
  for (const store of stores) {
    await store.clear();
  }
  await Promise.all(connections.map((connection) => connection.quit()));
}

async function main(): Promise<void> {
  const client = new Redis(REDIS_URL);
  const info = await client.info('server');
  console.log(
    `Redis ${/redis_version:(\S+)/u.exec(info)?.[1] ?? '?'} at ${REDIS_URL}; ${OPS} sequential ops per command; Node ${process.version}\n`,
  );
  const namespaces: string[] = [];
  // Quotas are enforced atomically by the store; the handler gets infinite totals so it does not
  // pre-check them with an extra usage() round trip (the recommended production wiring).
  const open = (): RedisMemoryStore => {
    const namespace = `bench-${randomUUID()}`;
    namespaces.push(namespace);
    return createRedisMemoryStore({ redis: client, namespace, limits: STORE_LIMITS });
  };
  try {
    // Warm-up: connections, script cache, JIT.
    await runQuietly(async () => {
      const warm = open();
      for (let index = 0; index < 300; index += 1) {
        await warm.write(`w${index}`, FILE_TEXT, { mode: 'overwrite' });
        await warm.read(`w${index}`);
        await warm.edit(`w${index}`, (current) => `${current}.`);
        await client.get('warm');
      }
    });
    const floors = await rawFloors(client);
    console.log(format(floors.get));
    console.log(format(floors.set));
    console.log('');
    await runWorkload('store', storeWorkload(open()), floors);
    console.log('');
    const tool = createMemoryTool({ store: open(), limits: HANDLER_LIMITS });
    await runWorkload(
      'handler+store',
      handlerWorkload((input) => tool.execute(input)),
      floors,
    );
    console.log('');
    const directory = await mkdtemp(join(tmpdir(), 'baton-bench-fs-'));
    try {
      const sdkTool = await BetaLocalFilesystemMemoryTool.init(directory);
      await runWorkload(
        'SDK BetaLocalFilesystemMemoryTool',
        handlerWorkload(async (input) => {
          const command = input as { command: 'view' | 'create' | 'str_replace' | 'insert' };
          // The SDK's handlers take the command object and return the result text.
          const handler = sdkTool[command.command].bind(sdkTool) as (
            input: unknown,
          ) => Promise<string>;
          return { content: await handler(input), isError: false };
        }),
        floors,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    console.log('');
    await directoryView(open(), client);
    console.log('');
    await concurrentMixed(namespaces);
  } finally {
    for (const namespace of namespaces) {
      await createRedisMemoryStore({ redis: client, namespace }).clear();
    }
    await client.quit();
  }
}

async function runQuietly(action: () => Promise<void>): Promise<void> {
  await action();
}

await main();
