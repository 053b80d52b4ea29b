import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Git repositories for tests of workspaces: a user's checkout with uncommitted work on a
 * non-main branch, a fingerprint of everything in it, a bare remote.
 */

/** Runs git synchronously in `cwd` with a fixed identity; returns trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'User',
      GIT_AUTHOR_EMAIL: 'user@example.com',
      GIT_COMMITTER_NAME: 'User',
      GIT_COMMITTER_EMAIL: 'user@example.com',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

/** Writes files (relative path -> content) under `root`. */
export async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
}

/**
 * A user's repository: `main` with two commits, then a `feature` branch checked out with an
 * untracked file, an edited tracked file and a staged new file: uncommitted work Baton must
 * never touch.
 */
export async function createUserRepo(root: string): Promise<string> {
  const repo = path.join(root, 'user-repo');
  await mkdir(repo);
  git(repo, 'init', '-q', '-b', 'main');
  await writeFiles(repo, { 'README.md': '# app\n', 'src/app.js': 'console.log(1);\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'first');
  await writeFiles(repo, { 'src/lib.js': 'export const x = 1;\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'second');
  git(repo, 'checkout', '-q', '-b', 'feature');
  await writeFiles(repo, { 'src/feature.js': 'export const f = 1;\n' });
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'feature work');
  await writeFiles(repo, {
    'notes.txt': 'untracked notes\n',
    'src/app.js': 'console.log(2); // edited, not staged\n',
    'src/staged.js': 'staged but not committed\n',
  });
  git(repo, 'add', 'src/staged.js');
  return repo;
}

/** Every byte a user could lose: HEAD, the index file, the working tree, stash, branches, config. */
export async function checkoutFingerprint(repo: string): Promise<Record<string, string>> {
  const fingerprint: Record<string, string> = {
    head: await readFile(path.join(repo, '.git', 'HEAD'), 'utf8'),
    headCommit: git(repo, 'rev-parse', 'HEAD'),
    index: hash(await readFile(path.join(repo, '.git', 'index'))),
    stash: git(repo, 'stash', 'list'),
    config: await readFile(path.join(repo, '.git', 'config'), 'utf8'),
    nonBatonBranches: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads')
      .split('\n')
      .filter((line) => !line.startsWith('refs/heads/baton/'))
      .join('\n'),
  };
  for (const file of await listFiles(repo)) {
    fingerprint[`file:${file}`] = hash(await readFile(path.join(repo, file)));
  }
  return fingerprint;
}

async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(path.join(root, prefix), { withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    const relative = path.join(prefix, entry.name);
    if (relative === '.git') continue;
    if (entry.isDirectory()) files.push(...(await listFiles(root, relative)));
    else files.push(relative);
  }
  return files.sort();
}

function hash(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** A bare repository with one commit on `main`, as a hosted remote would be. */
export async function createBareRemote(root: string, name = 'remote.git'): Promise<string> {
  const seed = path.join(root, `${name}-seed`);
  await mkdir(seed);
  git(seed, 'init', '-q', '-b', 'main');
  await writeFiles(seed, { 'README.md': '# remote\n' });
  git(seed, 'add', '-A');
  git(seed, 'commit', '-q', '-m', 'initial');
  const bare = path.join(root, name);
  git(root, 'clone', '-q', '--bare', seed, bare);
  await rm(seed, { recursive: true, force: true });
  return bare;
}

/**
 * A user's repository with the usual husky set-up (`core.hooksPath=.husky`): its `pre-commit`
 * runs `scripts/check.sh` of the working tree, which the agent can rewrite.
 */
export async function createHuskyRepo(root: string): Promise<string> {
  const repo = await createUserRepo(root);
  await writeFiles(repo, {
    'scripts/check.sh': 'echo checked\n',
    '.husky/pre-commit': '#!/bin/sh\nsh scripts/check.sh\n',
  });
  await chmod(path.join(repo, '.husky', 'pre-commit'), 0o755);
  git(repo, 'add', 'scripts/check.sh', '.husky/pre-commit');
  git(repo, 'commit', '-q', '-m', 'husky');
  git(repo, 'config', 'core.hooksPath', '.husky');
  return repo;
}

/**
 * A host file that tells whether anything read or wrote it: its access time is set an hour
 * before its modification time, so on a `relatime` (or `strictatime`) mount the first read
 * moves it. `touched()` says what changed; `selfCheck()` reads a twin to prove the mount shows
 * reads (a test that cannot see a read could not fail).
 */
export async function plantCanary(
  dir: string,
  content = 'canary-content-outside\n',
): Promise<{
  path: string;
  touched(): Promise<{ read: boolean; written: boolean }>;
  selfCheck(): Promise<boolean>;
}> {
  const file = path.join(dir, 'canary.txt');
  const twin = path.join(dir, 'canary-twin.txt');
  const past = new Date(Date.now() - 3_600_000);
  const now = new Date();
  for (const target of [file, twin]) {
    await writeFile(target, content);
    await utimes(target, past, now);
  }
  const before = await stat(file);
  return {
    path: file,
    async touched() {
      const after = await stat(file);
      return {
        read: after.atimeMs !== before.atimeMs,
        written: after.mtimeMs !== before.mtimeMs || (await readFile(file, 'utf8')) !== content,
      };
    },
    async selfCheck() {
      const was = (await stat(twin)).atimeMs;
      await readFile(twin);
      return (await stat(twin)).atimeMs !== was;
    },
  };
}

/**
 * What a hostile model writes over the script a husky hook runs: it reads and overwrites
 * `canary`, prints the environment it got and stages its report so the checkpoint carries it.
 */
export function hostileHookScript(canary: string): string {
  return [
    "cat > scripts/check.sh <<'EOF'",
    'r=hook-report.txt',
    `cat ${canary} >> $r 2>&1 || echo "canary unreachable" >> $r`,
    `echo pwned > ${canary} 2>/dev/null || echo "canary unwritable" >> $r`,
    'echo "home=$HOME key=[$ANTHROPIC_API_KEY] redis=[$REDIS_URL]" >> $r',
    'git add $r 2>/dev/null',
    'exit 0',
    'EOF',
  ].join('\n');
}
