/**
 * Memory-tool benchmark (not a test): our handler over `FileSystemStore` vs the SDK's reference
 * `BetaLocalFilesystemMemoryTool`, same process, same operations, same disk.
 *
 *   pnpm bench:memory                                     (from the repo root)
 *   pnpm --filter @baton/core bench -- --quick            (fewer iterations)
 *   BENCH_ITERATIONS=5 BENCH_DIRECTORY_FILES=200 pnpm --filter @baton/core bench   (smoke run)
 *
 * Durability differs by default: our `FileSystemStore` defaults to `durability: 'full'` (fsync of
 * the file and of its directory, so a new name survives a crash), the SDK fsyncs the file only.
 * Writes are therefore measured twice: `baton` (full, stronger than the SDK) and
 * `baton (durability data)` (file fsync only, the same level as the SDK): that row is the
 * like-for-like comparison. The table's `durability` column says which is which.
 *
 * Prints ops/s and the median per operation for each side, and the ratio (SDK median / ours:
 * above 1 means we are faster). Results go in docs/benchmarks/memory.md.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { BetaLocalFilesystemMemoryTool } from '@anthropic-ai/sdk/tools/memory/node';
import { createFileSystemStore, createMemoryTool, memoryStoreLimits } from '@baton/core';

type Run = (input: Record<string, unknown>) => Promise<unknown>;

interface Side {
  name: string;
  /** What a write waits for before it is acknowledged. */
  durability: string;
  run: Run;
  cleanup: () => Promise<void>;
}

interface Measurement {
  opsPerSecond: number;
  medianMs: number;
}

/** A positive integer from the environment, or `fallback`. */
function fromEnvironment(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new TypeError(`${name} must be a positive integer, got ${raw}.`);
  }
  return value;
}

const quick = process.argv.includes('--quick');
const ITERATIONS = fromEnvironment('BENCH_ITERATIONS', quick ? 40 : 200);
const DIRECTORY_VIEW_ITERATIONS = Math.min(ITERATIONS, quick ? 3 : 10);
const DIRECTORY_FILES = fromEnvironment('BENCH_DIRECTORY_FILES', 2_000);

const FULL = 'full: file + directory fsync';
const DATA = 'data: file fsync (like the SDK)';

/** A configuration of ours worth showing next to the default for some operations. */
type Variant =
  'durability data' | 'durability data, quota in store' | 'no view cut' | 'no listing cache';

/** Our handler over a fresh `FileSystemStore`. */
async function createOurs(variant?: Variant): Promise<Side> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-bench-ours-'));
  // The big directory can be beyond the default maxFiles of 1,000.
  const quota = { maxTotalBytes: 52_428_800, maxFiles: 100_000 };
  const durability = variant?.startsWith('durability data') === true ? 'data' : 'full';
  // 'quota in store': the store enforces the store-wide limits atomically inside its own lock,
  // so the handler skips its usage() round trip (see docs/memory-protocol.md, Limits).
  const quotaInStore = variant === 'durability data, quota in store';
  const store = await createFileSystemStore({
    root: join(directory, 'memories'),
    durability,
    ...(quotaInStore ? { limits: memoryStoreLimits(quota) } : {}),
    // Every view reads the directory and lstats each entry: the cost of the first view after
    // another process changed the directory (or of a new process).
    ...(variant === 'no listing cache' ? { listingCacheEntries: 0 } : {}),
  });
  const tool = createMemoryTool({
    store,
    limits: variant === 'no view cut' ? { ...quota, maxViewChars: Number.MAX_SAFE_INTEGER } : quota,
    ...(quotaInStore ? { quotaEnforcement: 'store' as const } : {}),
  });
  return {
    name: variant === undefined ? 'baton' : `baton (${variant})`,
    durability: durability === 'full' ? FULL : DATA,
    run: async (input) => {
      const result = await tool.execute(input);
      if (result.isError) throw new Error(`baton: ${result.content}`);
      return result.content;
    },
    cleanup: async () => {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function createSdk(): Promise<Side> {
  const directory = await mkdtemp(join(tmpdir(), 'baton-bench-sdk-'));
  const tool = betaMemoryTool(await BetaLocalFilesystemMemoryTool.init(directory));
  return {
    name: 'SDK reference',
    durability: 'file fsync',
    run: (input) => Promise.resolve(tool.run(input as never, {} as never)),
    cleanup: () => rm(directory, { recursive: true, force: true }),
  };
}

/** ops/s from the summed durations (time spent in this side's calls) and the median. */
function summarize(durations: number[]): Measurement {
  const total = durations.reduce((sum, value) => sum + value, 0);
  const sorted = [...durations].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const medianMs =
    sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { opsPerSecond: (durations.length * 1000) / total, medianMs };
}

const TEXT = Array.from({ length: 100 }, (_, index) => `line ${index + 1}: ${'x'.repeat(60)}`).join(
  '\n',
);

/** The operations, each with its own setup so the sides start from the same state. */
const OPERATIONS: Array<{
  name: string;
  iterations: number;
  /** True for operations that write (durability matters). */
  writes: boolean;
  /** Other configurations of ours worth showing for this operation. */
  variants: Variant[];
  setup: (run: Run) => Promise<void>;
  /** Untimed step before each timed operation (same for every side). */
  before?: (run: Run, index: number) => Promise<unknown>;
  operation: (run: Run, index: number) => Promise<unknown>;
}> = [
  {
    name: 'create (new 6 KB file)',
    writes: true,
    iterations: ITERATIONS,
    variants: ['durability data', 'durability data, quota in store'],
    setup: async () => {},
    operation: (run, index) =>
      run({ command: 'create', path: `/memories/create/file-${index}.md`, file_text: TEXT }),
  },
  {
    name: 'view file (100 lines)',
    writes: false,
    iterations: ITERATIONS,
    variants: [],
    setup: async (run) => {
      await run({ command: 'create', path: '/memories/view.md', file_text: TEXT });
    },
    operation: (run) => run({ command: 'view', path: '/memories/view.md' }),
  },
  {
    name: 'str_replace (100-line file)',
    writes: true,
    iterations: ITERATIONS,
    variants: ['durability data', 'durability data, quota in store'],
    setup: async (run) => {
      await run({
        command: 'create',
        path: '/memories/replace.md',
        file_text: `${TEXT}\ncounter 0`,
      });
    },
    operation: (run, index) =>
      run({
        command: 'str_replace',
        path: '/memories/replace.md',
        old_str: `counter ${index}`,
        new_str: `counter ${index + 1}`,
      }),
  },
  {
    name: 'insert (line 1 of a growing file)',
    writes: true,
    iterations: ITERATIONS,
    variants: ['durability data', 'durability data, quota in store'],
    setup: async (run) => {
      await run({ command: 'create', path: '/memories/insert.md', file_text: TEXT });
    },
    operation: (run, index) =>
      run({
        command: 'insert',
        path: '/memories/insert.md',
        insert_line: 1,
        insert_text: `inserted ${index}`,
      }),
  },
  {
    name: `view directory (${DIRECTORY_FILES.toLocaleString('en-US')} files)`,
    writes: false,
    iterations: DIRECTORY_VIEW_ITERATIONS,
    variants: ['no view cut', 'no listing cache'],
    setup: fillBigDirectory,
    operation: (run) => run({ command: 'view', path: '/memories/big' }),
  },
  {
    name: `view directory right after a str_replace in it (${DIRECTORY_FILES.toLocaleString('en-US')} files)`,
    writes: false,
    iterations: DIRECTORY_VIEW_ITERATIONS,
    variants: ['no listing cache'],
    setup: fillBigDirectory,
    // Untimed: the edit changes the directory (its file is replaced by a rename) and one entry.
    before: (run, index) =>
      run({
        command: 'str_replace',
        path: '/memories/big/note-0000.md',
        old_str: `note ${index === 0 ? 0 : `0 ${index - 1}`}`,
        new_str: `note 0 ${index}`,
      }),
    operation: (run) => run({ command: 'view', path: '/memories/big' }),
  },
];

/** Creates DIRECTORY_FILES small files in /memories/big. */
async function fillBigDirectory(run: Run): Promise<void> {
  for (let index = 0; index < DIRECTORY_FILES; index++) {
    await run({
      command: 'create',
      path: `/memories/big/note-${String(index).padStart(4, '0')}.md`,
      file_text: `note ${index}`,
    });
  }
}

function format(value: number, digits = 2): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

async function main(): Promise<void> {
  console.log(
    `memory-tool benchmark: Node ${process.version}, ${cpus().length} CPU(s), load average ${loadavg()
      .map((value) => value.toFixed(1))
      .join(
        ' ',
      )}, temp dir ${tmpdir()}, ${ITERATIONS} iterations (${DIRECTORY_VIEW_ITERATIONS} for the directory view)`,
  );
  const rows: string[][] = [];
  for (const operation of OPERATIONS) {
    const sides = [await createOurs()];
    for (const variant of operation.variants) sides.push(await createOurs(variant));
    sides.push(await createSdk());
    for (const side of sides) {
      await operation.setup(side.run);
      // One untimed run warms caches (and the JIT) the same way for every side.
      await operation.operation(side.run, -1).catch(() => undefined);
    }
    // Interleaved, rotating which side goes first, so background load (this machine is shared)
    // hits every side alike and the ratio stays meaningful even when absolute numbers move.
    const durations = sides.map(() => [] as number[]);
    for (let index = 0; index < operation.iterations; index++) {
      for (let offset = 0; offset < sides.length; offset++) {
        const sideIndex = (index + offset) % sides.length;
        await operation.before?.(sides[sideIndex]!.run, index);
        const before = process.hrtime.bigint();
        await operation.operation(sides[sideIndex]!.run, index);
        durations[sideIndex]!.push(Number(process.hrtime.bigint() - before) / 1e6);
      }
    }
    const results = durations.map(summarize);
    const sdk = results.at(-1)!;
    sides.forEach((side, index) => {
      const result = results[index]!;
      rows.push([
        operation.name,
        side.name,
        operation.writes ? side.durability : 'n/a (read)',
        format(result.opsPerSecond, 0),
        format(result.medianMs, 3),
        side.name === 'SDK reference' ? '1.00' : format(sdk.medianMs / result.medianMs),
      ]);
    });
    for (const side of sides) await side.cleanup();
  }
  const header = [
    'operation',
    'implementation',
    'durability',
    'ops/s',
    'median ms/op',
    'speed-up vs SDK (median)',
  ];
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((width) => '-'.repeat(width)).join(' | ')} |`);
  for (const row of rows) console.log(line(row));
  console.log(
    [
      '',
      'Which comparison is like-for-like:',
      `- writes: "baton (durability data)" vs "SDK reference": both fsync the file only. This is the fair comparison.`,
      `- writes: "baton" (durability ${FULL}) also fsyncs the directory, so a created or renamed file survives a crash; it does more work than the SDK.`,
      `- writes: "baton (durability data, quota in store)": the store enforces the quotas atomically, no usage() call per write.`,
      '- reads (views): durability does not apply; every row is like-for-like.',
    ].join('\n'),
  );
}

await main();
