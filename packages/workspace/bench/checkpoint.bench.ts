/**
 * Benchmark of a checkpoint (not a test). Run: `pnpm bench:workspace` from the repo root (or
 * `pnpm bench` here).
 *
 * A 1,000-file repository (BENCH_FILES) in a local bare remote; each round changes BENCH_CHANGED
 * (default 3) files and times, in the same run and interleaved:
 * - Baton: `workspace.checkpoint()` = stage with the secret filter + commit + push of
 *   `baton/<id>` to the bare remote;
 * - the floor: the same change committed and pushed by hand in a plain clone
 *   (`git add -A && git commit -q -m ... && git push -q`), three git processes.
 * Prints p50/p95 of each and the ratio.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createProjectWorkspace, workspaceGitPaths } from '../src/index.js';

const FILES = Number(process.env.BENCH_FILES ?? 1000);
const CHANGED = Number(process.env.BENCH_CHANGED ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 3;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function writeTree(root: string): Promise<void> {
  for (let index = 0; index < FILES; index += 1) {
    const dir = path.join(root, 'src', `mod${Math.floor(index / 50)}`);
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, `file${index}.ts`),
      `export const value${index} = ${index};\n`.repeat(20),
    );
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'baton-bench-ws-'));
  try {
    const seed = path.join(root, 'seed');
    await mkdir(seed);
    git(seed, 'init', '-q', '-b', 'main');
    await writeTree(seed);
    git(seed, 'add', '-A');
    git(seed, 'commit', '-q', '-m', 'seed');
    const remote = path.join(root, 'remote.git');
    git(root, 'clone', '-q', '--bare', seed, remote);
    const base = git(remote, 'rev-parse', 'main');

    const home = path.join(root, 'home');
    const workspace = createProjectWorkspace({
      projectId: 'bench',
      dir: path.join(home, 'workspaces', 'bench'),
      gitDir: workspaceGitPaths(home, 'bench').gitDir,
      remote,
      baseCommit: base,
    });
    await workspace.prepare(null);

    const plain = path.join(root, 'plain');
    git(root, 'clone', '-q', remote, plain);
    git(plain, 'checkout', '-q', '-b', 'by-hand');
    git(plain, 'push', '-q', 'origin', 'by-hand');

    const baton: number[] = [];
    const floor: number[] = [];
    for (let round = 0; round < WARMUP + ROUNDS; round += 1) {
      for (const [dir, times, run] of [
        [
          workspace.dir,
          baton,
          async () => {
            const checkpoint = await workspace.checkpoint({ subject: `round ${round}` });
            if (!checkpoint.pushed || checkpoint.commit === null) throw new Error('not pushed');
          },
        ],
        [
          plain,
          floor,
          () => {
            git(plain, 'add', '-A');
            git(plain, 'commit', '-q', '-m', `round ${round}`);
            git(plain, 'push', '-q', 'origin', 'by-hand');
            return Promise.resolve();
          },
        ],
      ] as const) {
        for (let change = 0; change < CHANGED; change += 1) {
          const index = (round * CHANGED + change) % FILES;
          await writeFile(
            path.join(dir, 'src', `mod${Math.floor(index / 50)}`, `file${index}.ts`),
            `export const value${index} = ${round};\n`,
          );
        }
        const started = performance.now();
        await run();
        if (round >= WARMUP) times.push(performance.now() - started);
      }
    }
    const rows = [
      ['Baton checkpoint (stage + secret filter + commit + push)', baton],
      ['by hand: git add -A; git commit; git push', floor],
    ] as const;
    console.log(
      `checkpoint of ${CHANGED} changed files in a ${FILES}-file repository, ${ROUNDS} rounds`,
    );
    for (const [name, times] of rows) {
      console.log(
        `${name.padEnd(58)} p50 ${percentile(times, 50).toFixed(1)} ms  p95 ${percentile(times, 95).toFixed(1)} ms`,
      );
    }
    console.log(
      `ratio Baton / by hand (p50): ${(percentile(baton, 50) / percentile(floor, 50)).toFixed(2)}x; target p50 <= 100 ms: ${percentile(baton, 50) <= 100 ? 'met' : 'missed'}`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
