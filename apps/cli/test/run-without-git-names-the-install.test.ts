import { symlink, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

/**
 * A fresh machine has Node and no git. `baton run` (the README's `pnpm demo`) then says that git is
 * missing and how to install it, not a bare "git failed".
 */

const world = cliWorld();

it('baton run on a machine without git names git and its install command', async () => {
  // PATH holds node and nothing else (the host's /usr/bin would bring git along).
  const bin = path.join(world.dir, 'bin');
  await mkdir(bin);
  await symlink(process.execPath, path.join(bin, 'node'));
  const result = await runCli(['run', '--goal', '- print hello', '--project', 'no-git'], {
    cwd: world.dir,
    env: cliEnv(world.home, { PATH: bin }),
  });
  expect(`${result.stdout}${result.stderr}`).toContain(
    "the workspace could not be prepared: cannot create the project's repository: git is not installed (on Debian: apt-get install git)",
  );
  expect(`${result.stdout}${result.stderr}`).not.toMatch(/git failed/);
  expect(result.code).toBe(6);
}, 60_000);
