import { chmod, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BATON_FENCE_TRAILER, BATON_PROJECT_TRAILER, readTrailer } from '../src/index.js';
import {
  createUserRepo,
  git,
  repoWorkspace,
  useTempDirs,
  writeFiles,
} from './support/git-fixtures.js';

async function writeExecutable(file: string, body: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body);
  await chmod(file, 0o755);
}

/**
 * A repository with the usual husky set-up: `core.hooksPath` names a directory of the checkout
 * whose `pre-commit` runs a script of the working tree, which the agent can rewrite.
 */
async function huskyRepo(root: string, layout: 'husky-8' | 'husky-9') {
  const repo = await createUserRepo(root);
  await writeFiles(repo, {
    'scripts/check.sh': 'echo checked\n',
    'package.json': '{"name":"app"}\n',
  });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'husky');
  if (layout === 'husky-8') {
    await writeExecutable(
      path.join(repo, '.husky', 'pre-commit'),
      '#!/bin/sh\nsh scripts/check.sh\n',
    );
    git(repo, 'config', 'core.hooksPath', '.husky');
  } else {
    // husky 9: `.husky/_/<hook>` stubs source `.husky/_/h`, which runs `.husky/<hook>`.
    await writeExecutable(
      path.join(repo, '.husky', '_', 'pre-commit'),
      '#!/bin/sh\n. "$(dirname "$0")/h"\n',
    );
    await writeExecutable(
      path.join(repo, '.husky', '_', 'h'),
      '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ ! -f "$s" ] && exit 0\nexport PATH="node_modules/.bin:$PATH"\nsh -e "$s" "$@"\n',
    );
    await writeFile(path.join(repo, '.husky', 'pre-commit'), 'sh scripts/check.sh\n');
    git(repo, 'config', 'core.hooksPath', '.husky/_');
  }
  return repo;
}

async function open(root: string, repo: string) {
  const workspace = await repoWorkspace(root, repo);
  await workspace.prepare(null);
  return workspace;
}

describe('checkpoint commit hooks run inside the sandbox, never on the host', () => {
  const tempDir = useTempDirs();

  it('a husky hook running a script the agent rewrote reaches no canary, no worker secret, no real HOME', async () => {
    const root = await tempDir();
    const repo = await huskyRepo(root, 'husky-8');
    const canary = path.join(root, 'canary.txt');
    await writeFile(canary, 'canary-content-outside\n');
    // The worker's HOME, with what a hook run on the host would reach.
    const realHome = path.join(root, 'worker-home');
    await mkdir(path.join(realHome, '.ssh'), { recursive: true });
    await writeFile(path.join(realHome, '.ssh', 'id_ed25519'), 'worker-ssh-key\n');
    const env = { HOME: process.env.HOME, key: process.env.ANTHROPIC_API_KEY };
    process.env.HOME = realHome;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-canary-hook-must-not-see';
    try {
      const workspace = await open(root, repo);
      const configBefore = await readFile(path.join(workspace.gitDir, 'config'), 'utf8');
      const hooksBefore = await readdir(path.join(repo, '.husky'));
      // What a hostile model writes: the script the user's pre-commit hook runs.
      await writeFiles(workspace.dir, {
        'scripts/check.sh': [
          'r=report.txt',
          'echo "home=$HOME key=[$ANTHROPIC_API_KEY] redis=[$REDIS_URL]" > $r',
          `cat ${canary} >> $r 2>&1 || echo "canary unreachable" >> $r`,
          // Lands, if anywhere, in the sandbox's private /tmp: the host's canary is checked below.
          `echo pwned > ${canary} 2>/dev/null`,
          `cat ${realHome}/.ssh/id_ed25519 >> $r 2>&1 || echo "home unreachable" >> $r`,
          'cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n" | grep -c sk-ant-canary >> $r',
          // Baton's git configuration and hooks, and the user's hooks directory.
          'git config core.hooksPath /tmp/evil 2>/dev/null || echo "config unwritable" >> $r',
          'echo "touch pwned" > "$(git rev-parse --git-dir)/hooks-evil" 2>/dev/null',
          `echo x > ${repo}/.husky/pre-commit 2>/dev/null || echo "hooks unwritable" >> $r`,
          'echo x > /run/baton/hooks/pre-commit 2>/dev/null || echo "hooks mount unwritable" >> $r',
          'git add report.txt && git stash list >/dev/null && echo "scratch git works" >> $r',
          'exit 0',
          '',
        ].join('\n'),
      });
      const checkpoint = await workspace.checkpoint({ subject: 'agent work' });
      expect(checkpoint).toMatchObject({ hooks: 'passed', pushed: true });
      // The hook ran (its report is in the commit) and saw the sandbox, not the worker.
      const report = git(repo, 'show', 'baton/p:report.txt');
      expect(report.split('\n')).toEqual([
        `home=${workspace.dir} key=[] redis=[]`,
        expect.stringMatching(/No such file|canary unreachable/),
        'canary unreachable',
        expect.stringMatching(/No such file|home unreachable/),
        'home unreachable',
        '0',
        'config unwritable',
        'hooks unwritable',
        'hooks mount unwritable',
        'scratch git works',
      ]);
      expect(report).not.toContain('canary-content-outside');
      expect(report).not.toContain('worker-ssh-key');
      expect(await readFile(canary, 'utf8')).toBe('canary-content-outside\n');
      // Baton's configuration and hooks are unchanged (git inside wrote only a scratch copy).
      expect(await readFile(path.join(workspace.gitDir, 'config'), 'utf8')).toBe(configBefore);
      expect(await stat(path.join(workspace.gitDir, 'hooks-evil')).catch(() => null)).toBeNull();
      expect(await readdir(path.join(repo, '.husky'))).toEqual(hooksBefore);
      expect(await readFile(path.join(repo, '.husky', 'pre-commit'), 'utf8')).toContain('check.sh');
    } finally {
      process.env.HOME = env.HOME;
      if (env.key === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = env.key;
    }
  });

  it('husky 9 (`core.hooksPath=.husky/_`) runs `.husky/pre-commit`, and its refusal is saved with its output', async () => {
    const root = await tempDir();
    const repo = await huskyRepo(root, 'husky-9');
    const workspace = await open(root, repo);
    await writeFiles(workspace.dir, {
      'scripts/check.sh': 'echo "lint: $(pwd)/src/a.js: missing semicolon" >&2; exit 1\n',
      'src/a.js': 'x\n',
    });
    const checkpoint = await workspace.checkpoint({ subject: 'a', final: true });
    expect(checkpoint.hooks).toBe('refused');
    expect(checkpoint.hookOutput).toBe('lint: ./src/a.js: missing semicolon');
    expect(checkpoint.pushed).toBe(true);
    expect(git(repo, 'log', '-1', '--format=%B', 'baton/p')).toContain(
      'Baton-Hooks: refused (lint: ./src/a.js: missing semicolon); committed without hooks',
    );
  });

  it('commit-msg may edit the message; post-commit sees the new commit; nothing runs on the host', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const hooks = path.join(repo, '.git', 'hooks');
    await writeExecutable(
      path.join(hooks, 'commit-msg'),
      '#!/bin/sh\nprintf "\\nReviewed-by: hook\\n" >> "$1"\n',
    );
    await writeExecutable(
      path.join(hooks, 'post-commit'),
      `#!/bin/sh\ngit log -1 --format=%s > post-commit.txt\nhostname >> post-commit.txt\n`,
    );
    const workspace = await open(root, repo);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    const checkpoint = await workspace.checkpoint({ subject: 'edited' });
    expect(checkpoint.hooks).toBe('passed');
    expect(git(repo, 'log', '-1', '--format=%B', 'baton/p')).toContain('Reviewed-by: hook');
    // post-commit ran after the commit, in the sandbox (its hostname is the sandbox's).
    expect(await readFile(path.join(workspace.dir, 'post-commit.txt'), 'utf8')).toBe(
      'edited\nsandbox\n',
    );
  });

  it("commit-msg cannot make a checkpoint claim another fence or project: the hook's message is dropped", async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const hook = path.join(repo, '.git', 'hooks', 'commit-msg');
    // The session's own trailers stay in the message; a later one is what readers take.
    await writeExecutable(hook, '#!/bin/sh\nprintf "Baton-Fence: 70\\n" >> "$1"\n');
    const workspace = await repoWorkspace(root, repo, { fence: 7 });
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    expect(await workspace.checkpoint({ subject: 'fence' })).toMatchObject({ hooks: 'passed' });
    let message = git(repo, 'log', '-1', '--format=%B', 'baton/p');
    expect(readTrailer(message, BATON_FENCE_TRAILER)).toBe('7');
    expect(message).not.toContain('Baton-Fence: 70');
    // A project id that merely starts with the session's is another project.
    await writeExecutable(hook, '#!/bin/sh\nprintf "Baton-Project: p-other\\n" >> "$1"\n');
    await writeFiles(workspace.dir, { 'b.txt': 'b\n' });
    expect(await workspace.checkpoint({ subject: 'project' })).toMatchObject({ hooks: 'passed' });
    message = git(repo, 'log', '-1', '--format=%B', 'baton/p');
    expect(readTrailer(message, BATON_PROJECT_TRAILER)).toBe('p');
    // A hook keeping both trailers as they are still edits the message.
    await writeExecutable(hook, '#!/bin/sh\nprintf "Reviewed-by: hook\\n" >> "$1"\n');
    await writeFiles(workspace.dir, { 'c.txt': 'c\n' });
    await workspace.checkpoint({ subject: 'kept' });
    message = git(repo, 'log', '-1', '--format=%B', 'baton/p');
    expect(message).toContain('Reviewed-by: hook');
    expect(readTrailer(message, BATON_FENCE_TRAILER)).toBe('7');
  });
});
