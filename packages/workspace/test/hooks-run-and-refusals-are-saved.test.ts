import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProjectWorkspaceOptions } from '../src/index.js';
import {
  createUserRepo,
  git,
  repoWorkspace,
  useTempDirs,
  writeFiles,
} from './support/git-fixtures.js';

async function writeHook(repo: string, name: string, body: string): Promise<void> {
  const file = path.join(repo, '.git', 'hooks', name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

async function setup(
  root: string,
  options: Pick<ProjectWorkspaceOptions, 'skipHooks' | 'hookSandbox'> = {},
) {
  const repo = await createUserRepo(root);
  return { repo, workspace: await repoWorkspace(root, repo, options) };
}

describe("the repository's commit hooks", () => {
  const tempDir = useTempDirs();

  it('run on every checkpoint, in the sandbox, with none of the worker environment', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    await writeHook(
      repo,
      'pre-commit',
      'echo "ran key=[$ANTHROPIC_API_KEY] redis=[$REDIS_URL] host=$(hostname)" > hook.log',
    );
    process.env.ANTHROPIC_API_KEY = 'sk-ant-canary-hook-must-not-see';
    try {
      await workspace.prepare(null);
      await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
      const checkpoint = await workspace.checkpoint({ subject: 'a' });
      expect(checkpoint).toMatchObject({ hooks: 'passed', pushed: true });
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
    // What the hook wrote in the working tree is part of the checkpoint, as with a formatter.
    expect(git(repo, 'show', 'baton/p:hook.log')).toBe('ran key=[] redis=[] host=sandbox');
  });

  it('run on the host, with the same clean environment, only when the sandbox is off', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root, {
      hookSandbox: { mode: 'off', reason: 'opted-out' },
    });
    const log = path.join(root, 'hook.log');
    await writeHook(repo, 'pre-commit', `echo "ran key=[$ANTHROPIC_API_KEY]" >> ${log}`);
    process.env.ANTHROPIC_API_KEY = 'sk-ant-canary-hook-must-not-see';
    try {
      await workspace.prepare(null);
      await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
      expect(await workspace.checkpoint({ subject: 'a' })).toMatchObject({ hooks: 'passed' });
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
    }
    expect(await readFile(log, 'utf8')).toBe('ran key=[]\n');
  });

  it('that refuse still get the work saved, marked in a trailer, with their output and no host paths', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root);
    await writeHook(repo, 'pre-commit', 'echo "lint: $(pwd)/bad.js has a problem" >&2; exit 1');
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'bad.js': 'x\n' });
    const checkpoint = await workspace.checkpoint({ subject: 'a', final: true });
    expect(checkpoint.hooks).toBe('refused');
    expect(checkpoint.pushed).toBe(true);
    expect(checkpoint.hookOutput).toBe('lint: ./bad.js has a problem');
    expect(checkpoint.hookOutput).not.toContain(root);
    const message = git(repo, 'log', '-1', '--format=%B', 'baton/p');
    expect(message).toContain(
      'Baton-Hooks: refused (lint: ./bad.js has a problem); committed without hooks',
    );
    expect(git(repo, 'show', 'baton/p:bad.js')).toBe('x');
  });

  it('are not run with --skip-hooks', async () => {
    const root = await tempDir();
    const { repo, workspace } = await setup(root, { skipHooks: true });
    const log = path.join(root, 'hook.log');
    await writeHook(repo, 'pre-commit', `echo ran >> ${log}; exit 1`);
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    expect(await workspace.checkpoint({ subject: 'a' })).toMatchObject({
      hooks: 'skipped',
      pushed: true,
    });
    expect(await stat(log).catch(() => null)).toBeNull();
  });

  it('and the git configuration come from outside the workspace: an agent-written .git is ignored', async () => {
    const root = await tempDir();
    const { workspace } = await setup(root);
    await workspace.prepare(null);
    const canary = path.join(root, 'canary');
    // What an agent might write to run code outside its sandbox at the next checkpoint.
    await import('node:fs/promises').then(({ rm }) => rm(path.join(workspace.dir, '.git')));
    await mkdir(path.join(workspace.dir, '.git', 'hooks'), { recursive: true });
    await writeFile(
      path.join(workspace.dir, '.git', 'config'),
      `[core]\n\tfsmonitor = "touch ${canary}"\n\thooksPath = .git/hooks\n[filter "x"]\n\tclean = "touch ${canary}"\n`,
    );
    await writeHook(workspace.dir, 'pre-commit', `touch ${canary}`);
    await writeFiles(workspace.dir, { '.gitattributes': '* filter=x\n', 'a.txt': 'a\n' });
    const checkpoint = await workspace.checkpoint({ subject: 'a' });
    expect(checkpoint.pushed).toBe(true);
    expect(await stat(canary).catch(() => null)).toBeNull();
    const tree = git(workspace.gitDir, 'ls-tree', '-r', '--name-only', 'baton/p');
    expect(tree).not.toContain('.git/config');
    // The next prepare restores the link to Baton's git directory.
    await workspace.prepare(checkpoint.head);
    expect(await readFile(path.join(workspace.dir, '.git'), 'utf8')).toBe(
      `gitdir: ${workspace.gitDir}\n`,
    );
    expect(await stat(canary).catch(() => null)).toBeNull();
  });
});
