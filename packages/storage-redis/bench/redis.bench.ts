/**
 * Benchmark of the Redis memory store (not a test). Run: `pnpm bench:redis` from the repo root
 * (or `pnpm bench` here). Needs Redis at REDIS_URL (default redis://127.0.0.1:6379).
 *
 * Prints, in one run, for a 2 KB and a 100 KB file: raw ioredis GET/SET round trips (the floor); the store's view (read),
 * create, str_replace and insert (edit) sequentially, with ops/s and p50/p99, each interleaved
 * call by call with its floor (GET for view, SET of a new key for create, SET of the same key for
 * edits) and compared with it; the same through
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
const STORE_LIMITS = { maxFileBytes: 1_048_576, maxTotalBytes: 1_073_741_824, maxFiles: 100_000 };
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

function measurement(name: string, latencies: number[]): Measurement {
  const totalMs = latencies.reduce((sum, latency) => sum + latency, 0);
  const sorted = [...latencies].sort((left, right) => left - right);
  return {
    name,
    ops: latencies.length,
    opsPerSecond: (latencies.length / totalMs) * 1000,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
  };
}

async function timed(operation: () => Promise<unknown>, into: number[]): Promise<void> {
  const before = process.hrtime.bigint();
  await operation();
  into.push(Number(process.hrtime.bigint() - before) / 1e6);
}

/** Runs `operation(i)` `count` times one after the other and measures each call. */
async function sequential(
  name: string,
  count: number,
  operation: (index: number) => Promise<unknown>,
): Promise<Measurement> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index += 1) {
    await timed(() => operation(index), latencies);
  }
  return measurement(name, latencies);
}

/** A raw ioredis command measured interleaved with a store operation. */
interface Floor {
  name: string;
  run: () => Promise<unknown>;
}

/**
 * Like `sequential`, but each call of `operation` is paired with one call of the `floor` (the
 * one going first alternates), so both see the same machine state: this VM's loopback round
 * trip moves between about 25 us and 85 us from one second to the next, and a floor measured
 * once at the start would make the ratios depend on which state each phase happened to hit.
 */
async function interleaved(
  name: string,
  count: number,
  operation: (index: number) => Promise<unknown>,
  floor: Floor,
): Promise<{ result: Measurement; floor: Measurement }> {
  const latencies: number[] = [];
  const floorLatencies: number[] = [];
  for (let index = 0; index < count; index += 1) {
    if (index % 2 === 0) {
      await timed(floor.run, floorLatencies);
      await timed(() => operation(index), latencies);
    } else {
      await timed(() => operation(index), latencies);
      await timed(floor.run, floorLatencies);
    }
  }
  return { result: measurement(name, latencies), floor: measurement(floor.name, floorLatencies) };
}

function format(measurement: Measurement, floor?: Measurement): string {
  // Throughput ratio, and the p50 ratio, which is steadier on a busy machine (tails dominate the
  // mean); then the floor's own numbers from the same interleaved loop.
  const ratio =
    floor === undefined
      ? ''
      : `  ${(measurement.opsPerSecond / floor.opsPerSecond).toFixed(2)}x ${floor.name} (p50: ${(floor.p50 / measurement.p50).toFixed(2)}x; floor ${floor.opsPerSecond.toFixed(0)} ops/s, p50 ${floor.p50.toFixed(3)} ms)`;
  return `${measurement.name.padEnd(44)} ${measurement.opsPerSecond.toFixed(0).padStart(8)} ops/s   p50 ${measurement.p50.toFixed(3)} ms   p99 ${measurement.p99.toFixed(3)} ms${ratio}`;
}

function ensure(condition: boolean, message: string): void {
  if (!condition) {
    throw new Error(`benchmark self-check failed: ${message}`);
  }
}

/** A memory file of about `bytes` bytes: numbered progress lines, as the agent writes them. */
function fileText(bytes: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let line = 0; length < bytes; line += 1) {
    const text = `line ${line}: some remembered progress note`;
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join('\n');
}

/** The file sizes every workload runs at: a typical progress log, and a large one. */
const FILE_SIZES: Array<[string, string]> = [
  ['2 KB', fileText(2_048)],
  ['100 KB', fileText(102_400)],
];
/** Small files for the directory view and the concurrent phase. */
const FILE_TEXT = fileText(900);

/** The sequential memory workload, written once for every implementation. */
interface Workload {
  create(index: number): Promise<unknown>;
  /** A whole-file write over an existing file (the store only: the memory tool has no such command). */
  overwrite?(index: number): Promise<unknown>;
  view(index: number): Promise<unknown>;
  strReplace(index: number): Promise<unknown>;
  insert(index: number): Promise<unknown>;
  /** `str_replace` of line 4's label in file `index`, one way or back (`forward`). */
  relabel(index: number, forward: boolean): Promise<unknown>;
}

async function runWorkload(
  label: string,
  workload: Workload,
  floors: { get: Floor; set: Floor; setNewKey: Floor },
): Promise<void> {
  const steps: Array<[string, (index: number) => Promise<unknown>, Floor]> = [
    ['create', (index) => workload.create(index), floors.setNewKey],
    ['view (file)', (index) => workload.view(index), floors.get],
    ...(workload.overwrite === undefined
      ? []
      : [
          ['overwrite', workload.overwrite, floors.set] as [
            string,
            (index: number) => Promise<unknown>,
            Floor,
          ],
        ]),
    ['str_replace', (index) => workload.strReplace(index), floors.set],
    ['insert', (index) => workload.insert(index), floors.set],
    // The same 20 files edited over and over, as an agent edits its progress log: they stay in
    // the store's edit cache, so each commit is one round trip (the rows above miss it at 100 KB).
    [
      'str_replace, 20 files',
      (index) => workload.relabel(index % 20, Math.floor(index / 20) % 2 === 0),
      floors.set,
    ],
  ];
  for (const [name, operation, floor] of steps) {
    const { result, floor: measured } = await interleaved(
      `${label} ${name}`,
      OPS,
      operation,
      floor,
    );
    console.log(format(result, measured));
  }
}

function storeWorkload(store: RedisMemoryStore, text: string): Workload {
  return {
    create: (index) =>
      store.write(`bench/f${index}.md`, text, { mode: 'create', command: 'create' }),
    // A whole-file write over the file just created, alternating two contents. The old version
    // goes to history as a delta when the edit cache still holds it (2 KB), or is kept whole by
    // renaming its body when it does not (100 KB: the cache holds ~160 such files of the 2,000).
    overwrite: (index) =>
      store.write(`bench/f${index}.md`, index % 2 === 0 ? `${text} ` : text, {
        mode: 'overwrite',
        command: 'write',
      }),
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
    relabel: (index, forward) =>
      store.edit(
        `bench/f${index}.md`,
        (current) =>
          forward
            ? current.replace('line 4:', 'line four:')
            : current.replace('line four:', 'line 4:'),
        { command: 'str_replace' },
      ),
  };
}

function handlerWorkload(
  execute: (input: unknown) => Promise<{ content: string; isError: boolean }>,
  text: string,
): Workload {
  const run = async (input: unknown): Promise<void> => {
    const result = await execute(input);
    ensure(!result.isError, `${JSON.stringify(input).slice(0, 80)} -> ${result.content}`);
  };
  return {
    create: (index) =>
      run({ command: 'create', path: `/memories/bench/f${index}.md`, file_text: text }),
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
    relabel: (index, forward) =>
      run({
        command: 'str_replace',
        path: `/memories/bench/f${index}.md`,
        old_str: forward ? 'line 4:' : 'line four:',
        new_str: forward ? 'line four:' : 'line 4:',
      }),
  };
}

/**
 * Raw ioredis floors holding the same text as the store's files: GET and SET of one key, and SET
 * of a new key each time. A create makes a new file, so its floor is a SET that creates a key as
 * well: Redis takes fresh memory for it, which for 100 KB costs several times an overwrite (about
 * 0.5 ms against 0.13 ms here), and comparing a create with an overwrite would measure that.
 */
function rawFloors(
  client: Redis,
  key: string,
  text: string,
): { get: Floor; set: Floor; setNewKey: Floor } {
  return {
    get: { name: 'raw ioredis GET', run: () => client.get(key) },
    set: { name: 'raw ioredis SET', run: () => client.set(key, text) },
    setNewKey: {
      name: 'raw ioredis SET (new key)',
      run: () => client.set(`${key}:new:${(newKeys += 1)}`, text),
    },
  };
}

/**
 * Has Redis take the memory `count` values of `text` need and free it again, so that the creates
 * measured next (the store's new files and the floor's new keys) reuse memory Redis already has
 * rather than faulting in fresh pages from the kernel, which costs more than the command itself
 * at 100 KB and depends on what ran before (a design that frees buffers as it goes would hand
 * them to the floor's next SET). Freed pages stay with Redis's allocator for several seconds.
 */
async function releasedMemory(client: Redis, prefix: string, text: string, count: number) {
  for (let first = 0; first < count; first += 100) {
    const pipeline = client.pipeline();
    for (let index = first; index < Math.min(count, first + 100); index += 1) {
      pipeline.set(`${prefix}:${index}`, text);
    }
    await pipeline.exec();
  }
  for (let first = 0; first < count; first += 1000) {
    const keys = Array.from(
      { length: Math.min(1000, count - first) },
      (_, offset) => `${prefix}:${first + offset}`,
    );
    await client.del(...keys);
  }
}

/** How many keys the `setNewKey` floors made (`<floorKey>:new:1` on), for the clean-up. */
let newKeys = 0;

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
  const floorKey = `bench-raw:{${randomUUID()}}`;
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
    for (const [size, text] of FILE_SIZES) {
      await client.set(floorKey, text);
      const floors = rawFloors(client, floorKey, text);
      // Alone, for scale; every ratio below uses the floor measured interleaved with that row.
      console.log(`-- ${size} file --`);
      console.log(format(await sequential(floors.get.name, OPS, floors.get.run)));
      console.log(format(await sequential(floors.set.name, OPS, floors.set.run)));
      await releasedMemory(client, `${floorKey}:released`, text, 2 * OPS);
      await runWorkload(`store ${size}`, storeWorkload(open(), text), floors);
      const tool = createMemoryTool({ store: open(), limits: HANDLER_LIMITS });
      await releasedMemory(client, `${floorKey}:released`, text, 2 * OPS);
      await runWorkload(
        `handler+store ${size}`,
        handlerWorkload((input) => tool.execute(input), text),
        floors,
      );
      console.log('');
    }
    const [, smallText] = FILE_SIZES[0] ?? ['', FILE_TEXT];
    await client.set(floorKey, smallText);
    const floors = rawFloors(client, floorKey, smallText);
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
        }, smallText),
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
    await client.del(floorKey);
    for (let first = 1; first <= newKeys; first += 1000) {
      const batch = Array.from(
        { length: Math.min(1000, newKeys - first + 1) },
        (_, offset) => `${floorKey}:new:${first + offset}`,
      );
      await client.unlink(...batch);
    }
    await client.quit();
  }
}

async function runQuietly(action: () => Promise<void>): Promise<void> {
  await action();
}

await main();
