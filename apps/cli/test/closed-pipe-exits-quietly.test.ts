import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_MAIN, cliEnv, runCli, tempDir } from './helpers.js';
import { createRedisWorld, type RedisWorld } from './redis-fixtures.js';

/**
 * `baton ... | head` must end as `git log | head` does: when the reader goes away, baton exits
 * with status 0 and prints nothing (no Node `EPIPE` stack trace, no exit 1).
 */

interface ClosedPipeRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** What baton wrote on the stream that stayed open. */
  other: string;
}

/**
 * Starts `baton ...args` with stdout and/or stderr a pipe whose reading end is closed before the
 * process has started (node takes tens of milliseconds to boot, the close happens in the same tick
 * as the spawn), so its first write there meets EPIPE, as under `| head` once head has exited.
 */
function runWithClosedReader(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; close: 'stdout' | 'stderr' | 'both' },
): Promise<ClosedPipeRun> {
  const child = spawn(process.execPath, [CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let other = '';
  if (options.close !== 'stderr') child.stdout.destroy();
  else child.stdout.setEncoding('utf8').on('data', (chunk: string) => (other += chunk));
  if (options.close !== 'stdout') child.stderr.destroy();
  else child.stderr.setEncoding('utf8').on('data', (chunk: string) => (other += chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, other }));
  });
}

let dir: string;
let cleanup: () => Promise<void>;
let world: RedisWorld;
let redisProject: string;
const LOCAL = 'piped';

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  world = createRedisWorld();
  // A real `baton run` on the simulator gives the local verbs a project with memory, events,
  // transcripts and a branch to print.
  const run = await runCli(['run', '--goal', '- print hello', '--project', LOCAL], {
    cwd: dir,
    env: cliEnv(path.join(dir, 'home')),
  });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  redisProject = world.projectId('pipe');
  await world.control.createProject({ id: redisProject, goal: '- one' });
  await world.append(redisProject, { type: 'note', at: Date.now(), text: 'hello' });
}, 180_000);

afterAll(async () => {
  await world.cleanup();
  await cleanup();
});

const localEnv = () => cliEnv(path.join(dir, 'home'));
const redisEnv = () => world.env(path.join(dir, 'redis-home'));

/** Every verb that prints to stdout, with the arguments that make it print. */
const localVerbs: Array<[string, string[]]> = [
  ['--help', ['--help']],
  ['help run', ['help', 'run']],
  ['--version', ['--version']],
  ['logs --local', ['logs', LOCAL, '--local']],
  ['transcript --local', ['transcript', LOCAL, '--local']],
  ['projects --local', ['projects', '--local']],
  ['diff --local', ['diff', LOCAL, '--local']],
  ['search --local', ['search', LOCAL, 'hello', '--local']],
  ['memory ls --local', ['memory', 'ls', LOCAL, '--local']],
  ['memory cat --local', ['memory', 'cat', LOCAL, '/memories/progress.md', '--local']],
  ['memory log --local', ['memory', 'log', LOCAL, '--local']],
  ['memory history --local', ['memory', 'history', LOCAL, '/memories/progress.md', '--local']],
];
const redisVerbs: Array<[string, () => string[]]> = [
  ['status', () => ['status', redisProject]],
  ['status (all)', () => ['status']],
  ['projects', () => ['projects']],
  ['logs', () => ['logs', redisProject]],
  ['memory ls', () => ['memory', 'ls', redisProject]],
  ['say', () => ['say', redisProject, 'keep going']],
  ['pause', () => ['pause', redisProject]],
  ['resume', () => ['resume', redisProject]],
  ['cancel', () => ['cancel', redisProject]],
  ['enqueue', () => ['enqueue', '--project', world.projectId('pipe-new'), '--goal', '- one']],
];

describe('a reader that goes away ends baton quietly with status 0', () => {
  it.each(localVerbs)('baton %s | head', async (_name, args) => {
    // One after the other: two local verbs at once share one clone (`diff` runs host git in it).
    const open = await runCli(args, { cwd: dir, env: localEnv() });
    const closed = await runWithClosedReader(args, { cwd: dir, env: localEnv(), close: 'stdout' });
    // The verb does print (so the closed pipe is really written to) ...
    expect(open.stdout).not.toBe('');
    // ... and with the reader gone it exits 0 without a word on stderr.
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });

  it.each(redisVerbs)('baton %s | head (projects on Redis)', async (_name, args) => {
    const closed = await runWithClosedReader(args(), {
      cwd: dir,
      env: redisEnv(),
      close: 'stdout',
    });
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });

  it('baton run | head: the in-process run stops quietly at its first line', async () => {
    const closed = await runWithClosedReader(['run', '--goal', '- one', '--project', 'cut'], {
      cwd: dir,
      env: localEnv(),
      close: 'stdout',
    });
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });

  it('baton sim | head: a long-running verb exits once its first line meets the closed pipe', async () => {
    const closed = await runWithClosedReader(['sim', '--port', '0'], {
      cwd: dir,
      env: localEnv(),
      close: 'stdout',
    });
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });

  it('a misspelt verb piped into head (2>&1 | head) exits 0, not with a stack trace', async () => {
    const open = await runCli(['stauts'], { cwd: dir, env: localEnv() });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("unknown command 'stauts'");
    const closed = await runWithClosedReader(['stauts'], {
      cwd: dir,
      env: localEnv(),
      close: 'both',
    });
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });

  it('an error line whose stderr reader went away exits 0 too', async () => {
    const closed = await runWithClosedReader(['logs', 'no-such-project', '--local'], {
      cwd: dir,
      env: localEnv(),
      close: 'stderr',
    });
    expect(closed).toEqual({ code: 0, signal: null, other: '' });
  });
});
