import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, startCli, tempDir } from './helpers.js';

/**
 * The first `baton diff --local` of a project creates its bare cache under
 * `BATON_HOME/cache/<project>.git`. Two started at once (two terminals, a script) must both
 * succeed, whichever of them creates it: before, both ran `git init` in the same directory and
 * one failed on the other's files.
 */

const PROJECT = 'twodiffs';
let dir: string;
let cleanup: () => Promise<void>;
const env = () => cliEnv(path.join(dir, 'home'));

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
  const run = await runCli(['run', '--goal', '- say hello', '--project', PROJECT], {
    cwd: dir,
    env: env(),
  });
  expect(run.code).toBe(0);
}, 180_000);

afterAll(async () => {
  await cleanup();
});

describe('baton diff --local twice at once on a project with no cache yet', () => {
  it('both succeed with the same branch, round after round', async () => {
    const cacheParent = path.join(dir, 'home', 'cache');
    const heads = new Set<string>();
    for (let round = 0; round < 4; round += 1) {
      await rm(cacheParent, { recursive: true, force: true });
      const diffs = await Promise.all(
        [0, 1].map(
          () => startCli(['diff', PROJECT, '--local', '--json'], { cwd: dir, env: env() }).done,
        ),
      );
      for (const diff of diffs) {
        expect(diff.stderr).toBe('');
        expect(diff.code).toBe(0);
        const parsed = JSON.parse(diff.stdout) as { head: string | null; text: string };
        expect(parsed.head).toMatch(/^[0-9a-f]{40}$/u);
        expect(parsed.text).not.toBe('');
        heads.add(parsed.head!);
      }
      // One cache and no temporary directory left beside it.
      expect(await readdir(cacheParent)).toEqual([`${PROJECT}.git`]);
    }
    expect(heads.size).toBe(1);
  }, 180_000);
});
