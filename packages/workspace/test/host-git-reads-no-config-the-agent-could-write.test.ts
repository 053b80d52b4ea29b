import { chmod, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProjectWorkspace,
  diffProjectBranch,
  resolveProjectSource,
  workspaceGitPaths,
} from '../src/index.js';
import { gitEnvironment } from '../src/repository/git.js';
import { createUserRepo, git, useTempDirs, writeFiles } from './support/git-fixtures.js';

/**
 * The chain of issue #28: a file the agent got written on the host (the worker's `~/.gitconfig`,
 * the XDG one, a system config) names a command in `core.fsmonitor`, a filter or a hooks path.
 * No git Baton runs on the host (prepare, checkpoint, push, the dashboard's diff cache) may run it.
 */
const saved = { ...process.env };
afterEach(() => {
  for (const key of ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM']) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

function hostileConfig(canary: string, hooks: string): string {
  return [
    '[core]',
    `\tfsmonitor = "touch ${canary}.fsmonitor"`,
    `\thooksPath = ${hooks}`,
    '[filter "lfs"]',
    `\tclean = "touch ${canary}.filter"`,
    `\tsmudge = "touch ${canary}.filter"`,
    '\trequired = true',
    '[diff "x"]',
    `\ttextconv = "touch ${canary}.textconv"`,
    '',
  ].join('\n');
}

describe('host git reads no configuration the agent could have written', () => {
  const tempDir = useTempDirs();

  it('global, XDG and system configs naming commands are never read by a checkpoint or a diff', async () => {
    const root = await tempDir();
    const canaries = path.join(root, 'canaries');
    await mkdir(canaries);
    const hooks = path.join(root, 'planted-hooks');
    await mkdir(hooks);
    for (const name of ['pre-commit', 'post-checkout', 'pre-push', 'post-commit']) {
      await writeFile(path.join(hooks, name), `#!/bin/sh\ntouch ${canaries}/hook-${name}\n`);
      await chmod(path.join(hooks, name), 0o755);
    }
    const repo = await createUserRepo(root);
    const source = await resolveProjectSource({ repo, projectId: 'p' });

    const home = path.join(root, 'home-of-worker');
    await mkdir(path.join(home, 'xdg', 'git'), { recursive: true });
    await writeFile(path.join(home, '.gitconfig'), hostileConfig(`${canaries}/global`, hooks));
    await writeFile(
      path.join(home, 'xdg', 'git', 'config'),
      hostileConfig(`${canaries}/xdg`, hooks),
    );
    await writeFile(path.join(home, 'system'), hostileConfig(`${canaries}/system`, hooks));
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = path.join(home, 'xdg');
    process.env.GIT_CONFIG_SYSTEM = path.join(home, 'system');
    // The planted files are what git would read without Baton's settings: the test can fail.
    expect(git(root, 'config', '--get', 'core.fsmonitor')).toContain('touch');

    const baton = path.join(root, 'baton');
    const workspace = createProjectWorkspace({
      projectId: 'p',
      dir: path.join(baton, 'workspaces', 'p'),
      gitDir: workspaceGitPaths(baton, 'p').gitDir,
      remote: source.repo,
      baseCommit: source.baseCommit,
    });
    await workspace.prepare(null);
    await writeFiles(workspace.dir, {
      '.gitattributes': '* filter=lfs diff=x\n',
      'a.txt': 'a\n',
    });
    const first = await workspace.checkpoint({ subject: 'one' });
    expect(first.pushed).toBe(true);
    await writeFiles(workspace.dir, { 'b.txt': 'b\n' });
    const second = await workspace.checkpoint({ subject: 'two', final: true });
    expect(second.pushed).toBe(true);
    await workspace.prepare(second.head);
    const diff = await diffProjectBranch({
      projectId: 'p',
      remote: source.repo,
      baseCommit: source.baseCommit,
      cacheDir: path.join(baton, 'diff-cache'),
    });
    expect(diff.text).toContain('b.txt');
    expect(await readdir(canaries)).toEqual([]);
    // The work itself is committed as written (no filter ran on it).
    expect(git(repo, 'show', 'baton/p:a.txt')).toBe('a');
  }, 60_000);

  it('the environment git gets: no system config, no global config unless the operator names one', () => {
    const env = gitEnvironment({
      PATH: '/usr/bin',
      HOME: '/root',
      GIT_CONFIG_SYSTEM: '/tmp/planted',
      GIT_CONFIG_NOSYSTEM: '0',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: 'store',
      ANTHROPIC_API_KEY: 'sk-ant-x',
    });
    expect(env).toMatchObject({
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.helper',
    });
    expect(env.GIT_CONFIG_SYSTEM).toBeUndefined();
    expect(env.ANTHROPIC_API_KEY).toBeUndefined();
    expect(gitEnvironment({ GIT_CONFIG_GLOBAL: '/etc/baton/gitconfig' }).GIT_CONFIG_GLOBAL).toBe(
      '/etc/baton/gitconfig',
    );
  });
});
