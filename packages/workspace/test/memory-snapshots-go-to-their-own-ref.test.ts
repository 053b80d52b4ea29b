import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import {
  MemorySnapshotWriter,
  collectMemoryFiles,
  createProjectWorkspace,
  listProjectBranches,
  readMemorySnapshot,
  resolveProjectSource,
  restoreMemoryFiles,
  workspaceGitPaths,
} from '../src/index.js';
import {
  checkoutFingerprint,
  createBareRemote,
  createUserRepo,
  git,
  useTempDirs,
} from './support/git-fixtures.js';

const KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH';

/** Project `p`'s clone of `remote` under `<root>/<home>`, prepared, with one checkpoint pushed. */
async function checkpointedClone(root: string, remote: string, home: string) {
  const source = await resolveProjectSource({ repo: remote, projectId: 'p' });
  const batonHome = path.join(root, home);
  const workspace = createProjectWorkspace({
    projectId: 'p',
    dir: path.join(batonHome, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(batonHome, 'p').gitDir,
    remote: source.repo,
    baseCommit: source.baseCommit,
  });
  await workspace.prepare(null);
  await writeFile(path.join(workspace.dir, 'app.js'), `// ${home}\n`);
  const checkpoint = await workspace.checkpoint({ subject: 'baton: work', final: true });
  expect(checkpoint.pushed).toBe(true);
  return workspace;
}

/** git in `cwd` with `input` on stdin. */
function gitWithInput(cwd: string, input: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, input, encoding: 'utf8' }).trim();
}

function treeOf(repo: string, commit: string): string[] {
  return git(repo, 'ls-tree', '-r', '--name-only', commit).split('\n').filter(Boolean);
}

describe('memory snapshots', () => {
  const tempDir = useTempDirs();

  it('go to refs/baton/memory/<id> of a bare remote, without secrets or hostile paths, and come back', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const workspace = await checkpointedClone(root, remote, 'home');
    const clone = (...args: string[]) =>
      git(workspace.dir, `--git-dir=${workspace.gitDir}`, ...args);
    const cloneState = [
      clone('status', '--porcelain'),
      clone('rev-parse', 'HEAD'),
      clone('ls-files', '-s'),
    ];
    const branchTip = git(remote, 'rev-parse', 'refs/heads/baton/p');

    const store = new InMemoryStore();
    await store.write('progress.md', '# Progress\n- session 1 done\n', { mode: 'create' });
    await store.write('features.json', '{"features":[]}\n', { mode: 'create' });
    await store.write('notes/startup.md', 'run npm start\n', { mode: 'create' });
    await store.write('notes/.env', 'TOKEN=abc\n', { mode: 'create' });
    await store.write('keys.md', `the key is ${KEY}\n`, { mode: 'create' });
    const files = [
      ...(await collectMemoryFiles(store)),
      // What a broken or hostile store could hand over: never written into a tree.
      { path: '../escape.md', content: 'out' },
      { path: '/etc/passwd', content: 'root' },
      { path: 'a/../b.md', content: 'b' },
      { path: '.git/config', content: '[core]' },
      { path: 'x\\y.md', content: 'y' },
    ];

    const writer = new MemorySnapshotWriter({ gitDir: workspace.gitDir, projectId: 'p' });
    const first = await writer.write({
      files,
      goal: 'build a todo app',
      sessionNumber: 1,
      fenceToken: 7,
    });
    expect(first.error).toBeUndefined();
    expect(first).toMatchObject({ pushed: true, unchanged: false });
    expect(first.withheld).toEqual([
      { path: '../escape.md', reason: 'invalid_path' },
      { path: '.git/config', reason: 'invalid_path' },
      { path: '/etc/passwd', reason: 'invalid_path' },
      { path: 'a/../b.md', reason: 'invalid_path' },
      { path: 'keys.md', reason: 'secret_content' },
      { path: 'notes/.env', reason: 'secret_file_name' },
      { path: 'x\\y.md', reason: 'invalid_path' },
    ]);

    // On the remote, seen by ls-remote, not a branch; the branch did not move.
    expect(git(root, 'ls-remote', remote, 'refs/baton/memory/p')).toBe(
      `${first.commit}\trefs/baton/memory/p`,
    );
    expect(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/heads')).not.toContain(
      'memory',
    );
    expect(git(remote, 'rev-parse', 'refs/heads/baton/p')).toBe(branchTip);
    expect(treeOf(remote, first.commit!)).toEqual([
      'manifest.json',
      'memories/features.json',
      'memories/notes/startup.md',
      'memories/progress.md',
    ]);
    const manifest = JSON.parse(git(remote, 'show', `${first.commit}:manifest.json`)) as Record<
      string,
      unknown
    >;
    expect(manifest).toMatchObject({
      format: 1,
      projectId: 'p',
      goal: 'build a todo app',
      sessionNumber: 1,
      fenceToken: 7,
      files: ['features.json', 'notes/startup.md', 'progress.md'],
    });
    // Neither the key nor the .env's content is anywhere in the snapshot.
    const everything = git(remote, 'log', '-p', '--format=%B', 'refs/baton/memory/p');
    expect(everything).not.toContain('sk-ant-');
    expect(everything).not.toContain('TOKEN=abc');
    // The clone's working tree, index and HEAD are as they were.
    expect([
      clone('status', '--porcelain'),
      clone('rev-parse', 'HEAD'),
      clone('ls-files', '-s'),
    ]).toEqual(cloneState);

    // Nothing changed: no new snapshot. A change: a child of the first.
    const again = await writer.write({
      files,
      goal: 'build a todo app',
      sessionNumber: 2,
      fenceToken: 8,
    });
    expect(again).toMatchObject({ commit: first.commit, unchanged: true, pushed: true });
    await store.edit('progress.md', (text) => `${text}- session 2 done\n`);
    const second = await writer.write({
      files: await collectMemoryFiles(store),
      goal: 'build a todo app',
      sessionNumber: 2,
      fenceToken: 8,
    });
    expect(second.unchanged).toBe(false);
    expect(git(remote, 'rev-parse', `${second.commit}^`)).toBe(first.commit);

    // Another worker's clone builds on the remote's latest snapshot; nothing is forced.
    const other = await checkpointedClone(root, remote, 'other-home');
    await store.write('notes/other.md', 'from the other worker\n', { mode: 'create' });
    const third = await new MemorySnapshotWriter({ gitDir: other.gitDir, projectId: 'p' }).write({
      files: await collectMemoryFiles(store),
      goal: 'build a todo app',
      sessionNumber: 3,
      fenceToken: 9,
    });
    expect(third.pushed).toBe(true);
    expect(git(remote, 'rev-parse', `${third.commit}^`)).toBe(second.commit);
    // The first writer's next snapshot is refused as stale, then built on the other one's.
    await store.write('notes/first.md', 'back on the first worker\n', { mode: 'create' });
    const fourth = await writer.write({
      files: await collectMemoryFiles(store),
      goal: 'build a todo app',
      sessionNumber: 4,
      fenceToken: 10,
    });
    expect(fourth.pushed).toBe(true);
    expect(git(remote, 'rev-parse', `${fourth.commit}^`)).toBe(third.commit);

    // Listed with its branch, and read back into a fresh store through the MemoryStore interface.
    expect(await listProjectBranches({ repo: remote })).toEqual([
      expect.objectContaining({ projectId: 'p', memorySnapshot: fourth.commit }),
    ]);
    const read = await readMemorySnapshot({ repo: remote, projectId: 'p' });
    if (!read.found) throw new Error(read.reason);
    expect(read.snapshot.manifest.goal).toBe('build a todo app');
    const restored = new InMemoryStore();
    await restoreMemoryFiles(restored, read.snapshot.files);
    expect(await collectMemoryFiles(restored)).toEqual(
      (await collectMemoryFiles(store)).filter(
        (file) => !['keys.md', 'notes/.env'].includes(file.path),
      ),
    );
  }, 90_000);

  it("never touch the user's checkout when the remote is it", async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const before = await checkoutFingerprint(repo);
    const workspace = await checkpointedClone(root, repo, 'home');
    const afterCheckpoint = await checkoutFingerprint(repo);
    const written = await new MemorySnapshotWriter({
      gitDir: workspace.gitDir,
      projectId: 'p',
    }).write({
      files: [{ path: 'progress.md', content: 'done\n' }],
      goal: 'g',
      sessionNumber: 1,
      fenceToken: null,
    });
    expect(written.pushed).toBe(true);
    expect(await checkoutFingerprint(repo)).toEqual(afterCheckpoint);
    expect(afterCheckpoint).toEqual(before);
    expect(git(repo, 'branch', '--list')).not.toContain('memory');
    expect(git(repo, 'rev-parse', 'refs/baton/memory/p')).toBe(written.commit);
  }, 90_000);

  it('are refused whole when missing, of another project, or holding anything but plain files', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    expect(await readMemorySnapshot({ repo: remote, projectId: 'p' })).toMatchObject({
      found: false,
      missing: true,
    });
    const hash = (content: string) => gitWithInput(remote, content, 'hash-object', '-w', '--stdin');
    const tree = (entries: string[]) => gitWithInput(remote, `${entries.join('\n')}\n`, 'mktree');
    const manifest = (projectId: string) =>
      hash(
        JSON.stringify({
          format: 1,
          projectId,
          goal: 'g',
          sessionNumber: 1,
          fenceToken: null,
          createdAt: new Date().toISOString(),
          files: ['a.md'],
          withheld: [],
        }),
      );
    const snapshot = (projectId: string, memories: string[]) => {
      const commit = git(
        remote,
        'commit-tree',
        tree([
          `100644 blob ${manifest(projectId)}\tmanifest.json`,
          `040000 tree ${tree(memories)}\tmemories`,
        ]),
        '-m',
        'hand-made',
      );
      git(remote, 'update-ref', 'refs/baton/memory/p', commit);
    };

    snapshot('q', [`100644 blob ${hash('a')}\ta.md`]);
    expect(await readMemorySnapshot({ repo: remote, projectId: 'p' })).toMatchObject({
      found: false,
      missing: false,
      reason: expect.stringContaining('belongs to project q'),
    });
    snapshot('p', [`120000 blob ${hash('/etc/passwd')}\ta.md`]);
    expect(await readMemorySnapshot({ repo: remote, projectId: 'p' })).toMatchObject({
      found: false,
      reason: expect.stringContaining('not a plain file'),
    });
    snapshot('p', [`040000 tree ${tree([`100644 blob ${hash('x')}\tconfig`])}\t.git`]);
    expect(await readMemorySnapshot({ repo: remote, projectId: 'p' })).toMatchObject({
      found: false,
      reason: expect.stringContaining('path the memory store refuses'),
    });
    snapshot('p', [`100644 blob ${hash('a')}\ta.md`]);
    expect(await readMemorySnapshot({ repo: remote, projectId: 'p' })).toMatchObject({
      found: true,
      snapshot: { files: [{ path: 'a.md', content: 'a' }] },
    });
  }, 90_000);
});
