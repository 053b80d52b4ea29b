import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkWorkspaceDir, previewAdoption, WorkspaceError } from '../src/index.js';
import { createUserRepo, git, repoWorkspace, useTempDirs } from './support/git-fixtures.js';

/** A Unix socket listening at `file` (Node unlinks it on close, so it stays open for the test). */
async function bindSocket(file: string): Promise<Server> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(file, resolve));
  return server;
}

describe('files left out of a checkpoint', () => {
  const tempDir = useTempDirs();

  it('are named with the reason: secrets by name or content, too large, FIFOs and sockets', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const workspace = await repoWorkspace(root, repo, { maxFileBytes: 1024 });
    await workspace.prepare(null);
    const key = `sk-ant-api03-${'q'.repeat(40)}`;
    await mkdir(path.join(workspace.dir, 'run'), { recursive: true });
    await writeFile(path.join(workspace.dir, '.env'), 'TOKEN=1\n');
    await writeFile(path.join(workspace.dir, 'notes.txt'), `${key}\n`);
    await writeFile(path.join(workspace.dir, 'big.bin'), 'x'.repeat(2048));
    await writeFile(path.join(workspace.dir, 'ok.js'), 'ok\n');
    execFileSync('mkfifo', [path.join(workspace.dir, 'run', 'in')]);
    const socket = await bindSocket(path.join(workspace.dir, 'run', 'app.sock'));
    const checkpoint = await workspace
      .checkpoint({ subject: 'a', final: true })
      .finally(() => new Promise((resolve) => socket.close(resolve)));
    expect(checkpoint.pushed).toBe(true);
    expect(checkpoint.skipped).toEqual(['.env', 'notes.txt']);
    expect(checkpoint.tooLarge).toEqual([{ path: 'big.bin', bytes: 2048 }]);
    expect(checkpoint.special).toEqual(
      expect.arrayContaining([
        { path: 'run/in', kind: 'fifo' },
        { path: 'run/app.sock', kind: 'socket' },
      ]),
    );
    const tree = git(repo, 'ls-tree', '-r', '--name-only', 'baton/p').split('\n');
    expect(tree).toContain('ok.js');
    for (const left of ['.env', 'notes.txt', 'big.bin', 'run/in', 'run/app.sock']) {
      expect(tree).not.toContain(left);
    }
  });
});

describe('files left out of one checkpoint, at the next', () => {
  const tempDir = useTempDirs();

  it('are left out again while unchanged, and a change is seen (no stale answer)', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const workspace = await repoWorkspace(root, repo, { maxFileBytes: 1024 });
    await workspace.prepare(null);
    const key = `sk-ant-api03-${'q'.repeat(40)}`;
    await writeFile(path.join(workspace.dir, 'notes.txt'), `${key}\n`);
    await writeFile(path.join(workspace.dir, 'keys.txt'), `${key}\n`);
    await writeFile(path.join(workspace.dir, 'big.bin'), 'x'.repeat(2048));
    const first = await workspace.checkpoint({ subject: 'a', final: true });
    expect(first.skipped).toEqual(['keys.txt', 'notes.txt']);
    expect(first.tooLarge).toEqual([{ path: 'big.bin', bytes: 2048 }]);

    // notes.txt loses its key, big.bin shrinks; keys.txt is untouched.
    await writeFile(path.join(workspace.dir, 'notes.txt'), 'plain notes\n');
    await writeFile(path.join(workspace.dir, 'big.bin'), 'small\n');
    await writeFile(path.join(workspace.dir, 'ok.js'), 'ok\n');
    const second = await workspace.checkpoint({ subject: 'b', final: true });
    expect(second.skipped).toEqual(['keys.txt']);
    expect(second.tooLarge).toBeUndefined();
    const tree = git(repo, 'ls-tree', '-r', '--name-only', 'baton/p').split('\n');
    expect(tree).toEqual(expect.arrayContaining(['notes.txt', 'big.bin', 'ok.js']));
    expect(tree).not.toContain('keys.txt');
    expect(git(repo, 'show', 'baton/p:notes.txt')).toBe('plain notes');

    // Unchanged, still left out, and a third checkpoint with nothing new commits nothing.
    const third = await workspace.checkpoint({ subject: 'c', final: true });
    expect(third.commit).toBeNull();
    expect(third.skipped).toEqual(['keys.txt']);
  });
});

describe('adopting a directory that already holds files', () => {
  const tempDir = useTempDirs();

  async function userDirectory(root: string): Promise<string> {
    const dir = path.join(root, 'mine');
    await mkdir(path.join(dir, 'src'), { recursive: true });
    await mkdir(path.join(dir, '.aws'), { recursive: true });
    await mkdir(path.join(dir, 'node_modules', 'x'), { recursive: true });
    await writeFile(path.join(dir, 'src', 'app.js'), 'app\n');
    await writeFile(path.join(dir, '.gitignore'), 'node_modules/\n');
    await writeFile(path.join(dir, 'node_modules', 'x', 'index.js'), 'x\n');
    await writeFile(path.join(dir, '.env'), 'TOKEN=canary\n');
    await writeFile(path.join(dir, '.npmrc'), '//registry.npmjs.org/:_authToken=canary\n');
    await writeFile(path.join(dir, 'id_rsa'), 'canary key\n');
    await writeFile(path.join(dir, '.aws', 'credentials'), '[default]\n');
    await writeFile(path.join(dir, 'data.bin'), 'x'.repeat(4096));
    return dir;
  }

  it('is refused without adopt, naming --adopt; an empty or missing directory passes', async () => {
    const root = await tempDir();
    const dir = await userDirectory(root);
    const refusal = await checkWorkspaceDir(dir).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WorkspaceError);
    expect((refusal as WorkspaceError).code).toBe('workspace_not_empty');
    expect((refusal as WorkspaceError).message).toBe(
      `--workspace ${dir} already holds files Baton did not create; add --adopt to make them the project's first checkpoint (secrets and files over the size limit stay uncommitted, nothing is deleted).`,
    );
    await expect(checkWorkspaceDir(dir, { adopt: true })).resolves.toBeUndefined();
    await mkdir(path.join(root, 'empty'));
    await expect(checkWorkspaceDir(path.join(root, 'empty'))).resolves.toBeUndefined();
    await expect(checkWorkspaceDir(path.join(root, 'absent'))).resolves.toBeUndefined();
  });

  it('is previewed as a checkpoint would stage it, writing nothing', async () => {
    const root = await tempDir();
    const dir = await userDirectory(root);
    const preview = await previewAdoption(dir, { maxFileBytes: 1024 });
    expect(preview).toEqual({
      dir,
      committed: ['.gitignore', 'src/app.js'],
      secrets: ['.aws/credentials', '.env', '.npmrc', 'id_rsa'],
      tooLarge: [{ path: 'data.bin', bytes: 4096 }],
      ignored: ['node_modules'],
      special: [],
      maxFileBytes: 1024,
    });
    // Read only: no .git, nothing added.
    await expect(readFile(path.join(dir, '.git'))).rejects.toThrow();
  });
});
