import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProjectWorkspace, workspaceGitPaths, type ProjectWorkspace } from '../src/index.js';
import { createBareRemote, git, useTempDirs, writeFiles } from './support/git-fixtures.js';

function workspaceOn(
  home: string,
  remote: string,
  baseCommit: string | null,
  extra = {},
): ProjectWorkspace {
  return createProjectWorkspace({
    projectId: 'p',
    dir: path.join(home, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(home, 'p').gitDir,
    remote,
    baseCommit,
    push: { attempts: 3, initialDelayMs: 20, maxDelayMs: 100 },
    ...extra,
  });
}

describe('checkpoints', () => {
  const tempDir = useTempDirs();

  it('reach the remote, and a worker with another BATON_HOME continues from the last one', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const base = git(remote, 'rev-parse', 'main');
    const first = workspaceOn(path.join(root, 'home-a'), remote, base);
    await first.prepare(null);
    await writeFiles(first.dir, { 'features/f1.sh': 'echo F1 ok\n' });
    const one = await first.checkpoint({ subject: 's1' });
    expect(one).toMatchObject({ pushed: true, hooks: 'none' });
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(one.commit);
    const again = await first.checkpoint({ subject: 'nothing new' });
    expect(again).toMatchObject({ commit: null, head: one.commit, pushed: true });

    // Work after the last checkpoint that a crash loses: an edit and an untracked file.
    await writeFiles(first.dir, { 'features/f1.sh': 'broken\n', 'half.txt': 'half done\n' });

    const second = workspaceOn(path.join(root, 'home-b'), remote, base);
    const prepared = await second.prepare(one.commit);
    expect(prepared).toMatchObject({ head: one.commit, remoteHead: one.commit, recovered: false });
    expect(await readFile(path.join(second.dir, 'features/f1.sh'), 'utf8')).toBe('echo F1 ok\n');
    await writeFiles(second.dir, { 'features/f2.sh': 'echo F2 ok\n' });
    const two = await second.checkpoint({ subject: 's2', final: true });
    expect(two.pushed).toBe(true);
    expect(git(remote, 'rev-parse', 'baton/p^')).toBe(one.commit);

    // The first worker comes back: its tracked files are reset to the new checkpoint; an
    // untracked file is never deleted (Baton removes no file it did not write) and the next
    // checkpoint commits it.
    const back = await first.prepare(two.commit);
    expect(back.head).toBe(two.commit);
    expect(await readFile(path.join(first.dir, 'features/f1.sh'), 'utf8')).toBe('echo F1 ok\n');
    expect(await readFile(path.join(first.dir, 'half.txt'), 'utf8')).toBe('half done\n');
    expect(await readFile(path.join(first.dir, 'features/f2.sh'), 'utf8')).toBe('echo F2 ok\n');
  });

  it('never commit secrets: name patterns and key-looking contents stay out', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const workspace = workspaceOn(
      path.join(root, 'home'),
      remote,
      git(remote, 'rev-parse', 'main'),
    );
    await workspace.prepare(null);
    await writeFiles(workspace.dir, {
      'app.js': 'const password = process.env.PASSWORD;\n',
      '.env': 'TOKEN=1\n',
      'deploy/server.pem': 'x',
      'config.js': 'const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";\n',
      'billing.js': `stripe("sk_live_${'a1B2'.repeat(6)}");\n`,
      'publish.sh': `npm config set //registry.npmjs.org/:_authToken npm_${'x9Y8'.repeat(9)}\n`,
      '.env.example': 'TOKEN=\n',
    });
    const gitlab = `glpat-${'Q7r'.repeat(7)}`;
    const checkpoint = await workspace.checkpoint({ subject: `s: pushed with ${gitlab}` });
    // Named ones too: left out by Baton's exclude rules, still reported by name.
    expect([...checkpoint.skipped].sort()).toEqual([
      '.env',
      'billing.js',
      'config.js',
      'deploy/server.pem',
      'publish.sh',
    ]);
    // The message is public once pushed: secrets in it are redacted by the same rules.
    const message = git(remote, 'log', '-1', '--format=%B', 'baton/p');
    expect(message).not.toContain(gitlab);
    expect(message).toContain('s: pushed with [REDACTED:gitlab_token]');
    const tree = git(remote, 'ls-tree', '-r', '--name-only', 'baton/p').split('\n');
    expect(tree).toEqual(expect.arrayContaining(['app.js', '.env.example', 'README.md']));
    expect(tree).not.toContain('.env');
    expect(tree).not.toContain('deploy/server.pem');
    expect(tree).not.toContain('config.js');
  });

  it('that cannot be pushed stay in the clone, retry with backoff, and are pushed by the next prepare', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const base = git(remote, 'rev-parse', 'main');
    const workspace = workspaceOn(path.join(root, 'home'), remote, base);
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    const pushed = await workspace.checkpoint({ subject: 'a' });

    const away = `${remote}-away`;
    await rename(remote, away);
    await writeFiles(workspace.dir, { 'b.txt': 'b\n' });
    const local = await workspace.checkpoint({ subject: 'b' });
    expect(local).toMatchObject({ pushed: false, pushError: { code: 'push_failed' } });
    expect(local.commit).not.toBeNull();
    // Inside the backoff window the next checkpoint does not try again.
    await writeFiles(workspace.dir, { 'c.txt': 'c\n' });
    const started = Date.now();
    const final = await workspace.checkpoint({ subject: 'c', final: true });
    expect(final.pushed).toBe(false);
    expect(final.pushError?.message).toContain('cannot push baton/p');
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 + 40);

    await rename(away, remote);
    const reopened = workspaceOn(path.join(root, 'home'), remote, base);
    const prepared = await reopened.prepare(pushed.commit);
    expect(prepared).toMatchObject({
      recovered: true,
      head: final.head,
      remoteHead: pushed.commit,
    });
    const next = await reopened.checkpoint({ subject: 'nothing new', final: true });
    expect(next).toMatchObject({ commit: null, pushed: true });
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(final.head);
  });

  it('are not pushed while the owner refuses (a session that lost its lease): the commit stays in the clone', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const base = git(remote, 'rev-parse', 'main');
    let holds = true;
    const asked: string[] = [];
    const workspace = workspaceOn(path.join(root, 'home'), remote, base, {
      mayPush: () => {
        asked.push(holds ? 'yes' : 'no');
        return Promise.resolve(holds ? undefined : 'this session no longer holds the project');
      },
    });
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    const first = await workspace.checkpoint({ subject: 'a' });
    expect(first.pushed).toBe(true);

    holds = false;
    await writeFiles(workspace.dir, { 'b.txt': 'b\n' });
    const refused = await workspace.checkpoint({ subject: 'b', final: true });
    expect(refused).toMatchObject({
      pushed: false,
      pushError: { code: 'push_failed', message: 'this session no longer holds the project' },
    });
    expect(refused.commit).not.toBeNull();
    // Asked once per push, never retried: a refusal is an answer, not a network fault.
    expect(asked).toEqual(['yes', 'no']);
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(first.commit);
    expect(
      git(path.dirname(workspace.gitDir), '--git-dir', workspace.gitDir, 'rev-parse', 'baton/p'),
    ).toBe(refused.commit);
  });

  it('are never force-pushed: a branch changed elsewhere is refused as push_rejected', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const base = git(remote, 'rev-parse', 'main');
    const workspace = workspaceOn(path.join(root, 'home'), remote, base);
    await workspace.prepare(null);
    await writeFiles(workspace.dir, { 'a.txt': 'a\n' });
    const mine = await workspace.checkpoint({ subject: 'a' });

    const other = path.join(root, 'other');
    git(root, 'clone', '-q', '-b', 'baton/p', remote, other);
    await writeFile(path.join(other, 'theirs.txt'), 'theirs\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'someone else');
    git(other, 'push', '-q', 'origin', 'baton/p');
    const theirs = git(other, 'rev-parse', 'HEAD');

    await writeFiles(workspace.dir, { 'b.txt': 'b\n' });
    const refused = await workspace.checkpoint({ subject: 'b', final: true });
    expect(refused).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(refused.pushError?.message).toMatch(/never force-pushes/);
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(theirs);

    // A rewritten branch that lost the last checkpoint is refused before any work starts.
    git(other, 'reset', '-q', '--hard', base);
    await writeFile(path.join(other, 'rewrite.txt'), 'x\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'rewrite');
    git(other, 'push', '-q', '--force', 'origin', 'baton/p');
    await expect(
      workspaceOn(path.join(root, 'home2'), remote, base).prepare(mine.commit),
    ).rejects.toMatchObject({
      code: 'branch_diverged',
    });
  });

  it('of a project without --repo go to a Baton-owned bare repository', async () => {
    const root = await tempDir();
    const home = path.join(root, 'home');
    const paths = workspaceGitPaths(home, 'p');
    const workspace = workspaceOn(home, paths.localRemote, null, { createRemote: true });
    const prepared = await workspace.prepare(null);
    expect(prepared.head).toBeNull();
    await writeFiles(workspace.dir, { 'main.py': 'print(1)\n' });
    const checkpoint = await workspace.checkpoint({ subject: 'first' });
    expect(checkpoint.pushed).toBe(true);
    expect(git(paths.localRemote, 'rev-parse', 'baton/p')).toBe(checkpoint.commit);
    // Another BATON_HOME has no such remote: it says so instead of starting over.
    const elsewhere = workspaceOn(
      path.join(root, 'other-home'),
      workspaceGitPaths(path.join(root, 'other-home'), 'p').localRemote,
      null,
      {
        createRemote: true,
      },
    );
    await expect(elsewhere.prepare(checkpoint.commit)).rejects.toThrow(/without --repo/);
  });
});
