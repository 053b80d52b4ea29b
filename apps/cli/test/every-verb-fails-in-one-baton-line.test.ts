import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_MAIN, type CliRun } from './helpers.js';
import { closedPort, redisCliWorld } from './redis-fixtures.js';

/**
 * Every verb, walked from the command tree itself (a verb added later is walked too), fails bad
 * arguments the same way: exit 2 and one line on stderr, `baton: <message>`, nothing on stdout.
 * Failures found at run time (no such project, Redis down) carry the same prefix with their own
 * exit codes (the table in `baton --help`).
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

const world = redisCliWorld();

interface Verb {
  words: string[];
  /** Required arguments in order, from the usage line (`<id>`, `<path>`). */
  required: string[];
}

async function verbs(): Promise<Verb[]> {
  const { stdout } = await run(
    process.execPath,
    ['--import', pathToFileURL(path.join(here, '../scripts/help-dump.mjs')).href, CLI_MAIN],
    { env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' } },
  );
  const pages = JSON.parse(stdout) as Array<{ path: string[]; help: string }>;
  return pages
    .filter((page) => page.path.length > 1)
    .map((page) => {
      const usage = page.help.split('\n')[0] ?? '';
      return {
        words: page.path.slice(1),
        required: [...usage.matchAll(/<([a-z-]+)>/gu)].map((match) => match[1] ?? ''),
      };
    });
}

/** Runs `runs` a few at a time: the machine is shared. */
async function inBatches<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  for (let index = 0; index < items.length; index += 4) {
    await Promise.all(items.slice(index, index + 4).map(work));
  }
}

function expectOneBatonLine(result: CliRun, label: string, code: number): string {
  expect(result.code, `${label}: ${result.stderr}`).toBe(code);
  expect(result.stdout, label).toBe('');
  const lines = result.stderr.split('\n');
  expect(lines, `${label}: ${result.stderr}`).toHaveLength(2);
  expect(lines[1], label).toBe('');
  expect(lines[0], label).toMatch(/^baton: \S/u);
  expect(lines[0], label).not.toMatch(/\berror: |\s{2}at |\/work\/|node_modules/u);
  return lines[0] ?? '';
}

describe('one error prefix across all verbs', () => {
  it('an unknown flag on every verb: exit 2, one line "baton: unknown option ..."', async () => {
    const all = await verbs();
    expect(all.length).toBeGreaterThan(20);
    await inBatches(all, async (verb) => {
      const label = `baton ${verb.words.join(' ')}`;
      const result = await world.cli([...verb.words, '--no-such-flag']);
      const line = expectOneBatonLine(result, label, 2);
      // Commander names a missing mandatory option (enqueue's --project) before an unknown one.
      expect(line, label).toMatch(
        /^baton: (unknown option '--no-such-flag'|required option '--[a-z-]+ <[a-z-]+>' not specified)$/u,
      );
    });
  }, 300_000);

  it('every verb missing a required argument, or given a bad project id: exit 2, one line', async () => {
    const withArguments = (await verbs()).filter((verb) => verb.required.length > 0);
    expect(withArguments.length).toBeGreaterThan(12);
    await inBatches(withArguments, async (verb) => {
      const label = `baton ${verb.words.join(' ')}`;
      const missing = await world.cli(verb.words);
      expect(expectOneBatonLine(missing, label, 2), label).toBe(
        `baton: missing required argument '${verb.required[0] ?? ''}'`,
      );
      if (verb.required[0] !== 'id') return;
      const rest = verb.required.slice(1).map(() => 'x');
      const badId = await world.cli([...verb.words, 'bad id!', ...rest]);
      expect(expectOneBatonLine(badId, label, 2), label).toContain('a project id must be');
    });
  }, 300_000);

  it('unknown verbs, verb groups without a verb, and run-time failures carry the same prefix', async () => {
    expect(expectOneBatonLine(await world.cli(['stauts']), 'stauts', 2)).toBe(
      "baton: unknown command 'stauts' (did you mean status?)",
    );
    expect(expectOneBatonLine(await world.cli(['memory']), 'memory', 2)).toMatch(
      /^baton: memory needs one of: ls, log, cat, /u,
    );
    expect(expectOneBatonLine(await world.cli(['memory', 'nope']), 'memory nope', 2)).toMatch(
      /^baton: unknown command 'memory nope'; memory has: ls, /u,
    );
    expect(
      expectOneBatonLine(await world.cli(['run', '--budgt-usd', '3']), 'run --budgt-usd', 2),
    ).toBe("baton: unknown option '--budgt-usd' (did you mean --budget-usd?)");
    const unknown = world.redis.projectId('nobody');
    expect(expectOneBatonLine(await world.cli(['status', unknown]), 'status', 7)).toContain(
      `no project ${unknown}`,
    );
    const port = await closedPort();
    const down = await world.cli(['status'], { REDIS_URL: `redis://127.0.0.1:${port}` });
    expect(expectOneBatonLine(down, 'status, Redis down', 8)).toContain('cannot reach Redis');
  }, 120_000);
});
