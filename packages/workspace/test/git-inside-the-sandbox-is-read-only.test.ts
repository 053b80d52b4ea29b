import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomHex } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CommandSandbox,
  type ProjectWorkspace,
  SANDBOX_GIT_DIR,
  openCommandSandbox,
  openProjectWorkspace,
  parseSandboxPolicy,
  probeSandbox,
  readOnlyGitNote,
} from '../src/index.js';

/**
 * The agent reads its project's history inside the sandbox (`git status`, `git diff`, `git log`)
 * while Baton's git directory stays Baton's: its configuration, hooks, refs and objects cannot
 * change, and nothing git prints names where Baton keeps it on the host.
 */

const CANARY = `canary-${randomHex(12)}`;

let home: string;
let workspace: ProjectWorkspace;
let sandbox: CommandSandbox;
let dotGit: string;
let fingerprint: string;

/** Every name, mode, content and mtime under Baton's git directory. */
function gitDirFingerprint(): string {
  const hash = createHash('sha256');
  const visit = (directory: string) => {
    for (const name of readdirSync(directory).sort()) {
      const file = path.join(directory, name);
      const stat = lstatSync(file);
      hash.update(`${file}\0${stat.mode}\0${stat.mtimeMs}\0`);
      if (stat.isDirectory()) visit(file);
      else if (stat.isSymbolicLink()) hash.update(readlinkSync(file));
      else hash.update(readFileSync(file));
    }
  };
  visit(workspace.gitDir);
  return hash.digest('hex');
}

async function run(command: string) {
  let output = '';
  const result = await sandbox.run(command, { onOutput: (chunk) => (output += chunk) });
  return { ...result, output };
}

describe('git inside the sandbox', () => {
  beforeAll(async () => {
    const probe = probeSandbox();
    if (!probe.usable) throw new Error(`the sandbox is unusable here: ${probe.problem}`);
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-git-inside-')));
    // A project without --repo: its remote is a bare repository under BATON_HOME as well.
    workspace = openProjectWorkspace({ home, projectId: 'demo', repo: null, baseCommit: null });
    await workspace.prepare(null);
    writeFileSync(path.join(workspace.dir, 'notes.txt'), 'first line\n');
    const first = await workspace.checkpoint({ subject: 'first checkpoint' });
    expect(first.pushed).toBe(true);
    writeFileSync(path.join(workspace.dir, 'notes.txt'), 'first line\nsecond line\n');
    writeFileSync(path.join(workspace.gitDir, 'baton-canary'), CANARY);
    dotGit = readFileSync(path.join(workspace.dir, '.git'), 'utf8');
    sandbox = await openCommandSandbox({
      workspace: realpathSync(workspace.dir),
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
      gitDir: workspace.gitDir,
    });
    fingerprint = gitDirFingerprint();
  });

  afterAll(async () => {
    await sandbox.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  it('status, diff and log work in the workspace', async () => {
    const status = await run('git status --short');
    expect(status).toMatchObject({ exitCode: 0, output: ' M notes.txt\n' });
    const diff = await run('git diff');
    expect(diff.exitCode).toBe(0);
    expect(diff.output).toContain('+second line');
    const log = await run('git log --format=%s');
    expect(log).toMatchObject({ exitCode: 0, output: 'first checkpoint\n' });
    const show = await run('git show --stat --format=%s HEAD && git branch --show-current');
    expect(show.output).toContain('notes.txt');
    expect(show.output).toContain('baton/demo');
    expect(gitDirFingerprint()).toBe(fingerprint);
  });

  it('shows no host path under BATON_HOME', async () => {
    const result = await run(
      'cat .git; git rev-parse --git-dir --git-common-dir; git config --list --show-origin; git remote -v; git status; git log -p; git reflog; git branch -a; ls -a ' +
        SANDBOX_GIT_DIR +
        '; git commit -qam x; git fsck 2>&1 | head -3',
    );
    expect(result.output).toContain(SANDBOX_GIT_DIR);
    expect(result.output).not.toContain(home);
  });

  const attempts: Record<string, string> = {
    'commit and stage': 'git commit -qam pwned; git add -A; git stash',
    'config (repository, and its file directly)': `git config user.name pwned; git config core.hooksPath /tmp; echo '[core] fsmonitor = touch /tmp/x' >> ${SANDBOX_GIT_DIR}/config`,
    hooks: `mkdir -p ${SANDBOX_GIT_DIR}/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > ${SANDBOX_GIT_DIR}/hooks/pre-commit; chmod +x ${SANDBOX_GIT_DIR}/hooks/*`,
    refs: `git branch pwned; git tag pwned; git update-ref refs/heads/baton/demo HEAD~0; git symbolic-ref HEAD refs/heads/pwned; echo 0000 > ${SANDBOX_GIT_DIR}/refs/heads/pwned`,
    objects: `echo pwned | git hash-object -w --stdin; git gc --prune=now; git prune; rm -rf ${SANDBOX_GIT_DIR}/objects`,
    'the canary, by path and by hard link': `echo pwned > ${SANDBOX_GIT_DIR}/baton-canary; ln ${SANDBOX_GIT_DIR}/baton-canary mine && echo pwned > mine; rm -f mine`,
    'redirecting .git': `rm -f .git; mv .git elsewhere; echo 'gitdir: /tmp/mine' > .git; mount --bind /tmp ${SANDBOX_GIT_DIR}`,
    'remounting writable': `mount -o remount,rw ${SANDBOX_GIT_DIR}; unshare -rm sh -c 'mount -o remount,rw ${SANDBOX_GIT_DIR}'; touch ${SANDBOX_GIT_DIR}/x`,
  };
  for (const [what, command] of Object.entries(attempts)) {
    it(`cannot change Baton's git directory: ${what}`, async () => {
      const result = await run(command);
      expect(result.output).toMatch(
        /Read-only file system|Device or resource busy|denied|not permitted/,
      );
      expect(gitDirFingerprint()).toBe(fingerprint);
      expect(readFileSync(path.join(workspace.gitDir, 'baton-canary'), 'utf8')).toBe(CANARY);
      expect(readFileSync(path.join(workspace.dir, '.git'), 'utf8')).toBe(dotGit);
      expect(result.output).not.toContain(home);
    });
  }

  it('a refused commit names the read-only git and says Baton commits', async () => {
    const result = await run('git add -A && git commit -qm "my work"');
    expect(result.exitCode).not.toBe(0);
    expect(readOnlyGitNote(result.output)).toMatch(/Baton commits and pushes your changes/);
    // A repository of the agent's own is its business and gets no such note.
    const own = await run(
      'git init -q /tmp/own && cd /tmp/own && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m own && git log --format=%s',
    );
    expect(own).toMatchObject({ exitCode: 0, output: 'own\n' });
    expect(readOnlyGitNote(own.output)).toBeNull();
  });

  it("Baton's own checkpoints still work after every attempt", async () => {
    const second = await workspace.checkpoint({ subject: 'second checkpoint' });
    expect(second.commit).not.toBeNull();
    expect(second.pushed).toBe(true);
    const log = await run('git log --format=%s && git status --short');
    expect(log.output).toBe('second checkpoint\nfirst checkpoint\n');
  });

  it('a git directory not made yet is left out instead of failing every command', async () => {
    const early = await openCommandSandbox({
      workspace: realpathSync(workspace.dir),
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
      gitDir: path.join(home, 'git', 'not-made-yet.git'),
    });
    try {
      let output = '';
      const result = await early.run('echo ok', { onOutput: (chunk) => (output += chunk) });
      expect({ exitCode: result.exitCode, output }).toEqual({ exitCode: 0, output: 'ok\n' });
    } finally {
      await early.dispose();
    }
  });

  it('without the .git file Baton wrote, git inside finds no repository and names no host path', async () => {
    rmSync(path.join(workspace.dir, '.git'));
    try {
      const result = await run('git status');
      expect(result.exitCode).not.toBe(0);
      expect(result.output).toMatch(/not a git repository/);
      expect(result.output).not.toContain(home);
    } finally {
      writeFileSync(path.join(workspace.dir, '.git'), dotGit);
    }
  });
});
