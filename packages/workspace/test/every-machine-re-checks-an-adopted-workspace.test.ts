/**
 * `--adopt` is decided where the project is created; the machine that prepares the workspace
 * decides again before it writes there. A directory holding files Baton did not put there is
 * refused unless the project adopted it and has no checkpoint yet, and adopting never overwrites
 * one of the user's files. Every refusal leaves the directory exactly as it was.
 */
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  WorkspaceError,
  createProjectWorkspace,
  resolveProjectSource,
  workspaceGitPaths,
} from '../src/index.js';
import { createBareRemote, git, useTempDirs, writeFiles } from './support/git-fixtures.js';

const USER_FILES = {
  'README.md': '# my own readme\n',
  'notes/todo.txt': 'my notes\n',
  '.aws/credentials': '[default]\naws_secret_access_key = canary\n',
};

/** Project `p`'s workspace at `dir` as the machine with Baton home `home` lays it out. */
async function machineWorkspace(
  home: string,
  dir: string,
  remote: string,
  adopt: boolean,
): Promise<ReturnType<typeof createProjectWorkspace>> {
  const source = await resolveProjectSource({ repo: remote, projectId: 'p' });
  return createProjectWorkspace({
    projectId: 'p',
    dir,
    gitDir: workspaceGitPaths(home, 'p').gitDir,
    remote: source.repo,
    baseCommit: source.baseCommit,
    adopt,
  });
}

/** Every file under `dir` (a `.git` file included) with its content. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(dir, file)] = await readFile(file, 'utf8');
  }
  return files;
}

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  return error as WorkspaceError;
}

describe('a machine preparing a workspace with files Baton did not put there', () => {
  const tempDir = useTempDirs();

  it('refuses it when the project did not adopt it, changing nothing', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const dir = path.join(root, 'mine');
    await writeFiles(dir, { 'notes/todo.txt': 'my notes\n', '.env': 'TOKEN=canary\n' });
    const before = await snapshot(dir);
    const workspace = await machineWorkspace(path.join(root, 'home'), dir, remote, false);
    const error = await refusal(workspace.prepare(null));
    expect(error.code).toBe('workspace_not_empty');
    expect(error.message).toBe(
      `the workspace ${dir} already holds files Baton did not create, and the project was not created with --adopt; nothing in it was changed. Empty it, or create the project with --adopt to make them its first checkpoint.`,
    );
    expect(await snapshot(dir)).toEqual(before);
    expect((await readdir(dir)).sort()).toEqual(['.env', 'notes']);
  });

  it("refuses a user's linked worktree (a .git file naming another repository), adopted or not", async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const dir = path.join(root, 'mine');
    await writeFiles(dir, {
      'src/app.js': 'mine\n',
      '.git': 'gitdir: /elsewhere/.git/worktrees/x\n',
    });
    const before = await snapshot(dir);
    for (const adopt of [false, true]) {
      const workspace = await machineWorkspace(path.join(root, 'home'), dir, remote, adopt);
      const error = await refusal(workspace.prepare(null));
      expect(error.code).toBe('workspace_taken');
      expect(error.message).toBe(
        `the workspace ${dir} is a git checkout of its own (its .git names another repository); give it as --repo instead (Baton never writes a checkout it did not make).`,
      );
      expect(await snapshot(dir)).toEqual(before);
    }
    expect(await readFile(path.join(dir, '.git'), 'utf8')).toBe(
      'gitdir: /elsewhere/.git/worktrees/x\n',
    );
  });

  it('adopts it without overwriting a file the base commit also has', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const dir = path.join(root, 'mine');
    await writeFiles(dir, USER_FILES);
    const before = await snapshot(dir);
    const home = path.join(root, 'home');
    const clash = await refusal((await machineWorkspace(home, dir, remote, true)).prepare(null));
    expect(clash.code).toBe('workspace_not_empty');
    expect(clash.message).toMatch(
      new RegExp(
        `^the workspace ${dir} holds files the base commit [0-9a-f]{12} also has \\(README\\.md\\); adopting it would overwrite them, so nothing in it was changed\\.`,
      ),
    );
    expect(await readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# my own readme\n');
    expect(await snapshot(dir)).toEqual(before);
    // The clone made for it is gone too: the next preparation decides again (no checkout -f).
    expect(await readdir(path.join(home, 'git')).catch(() => [])).toEqual([]);
    expect(
      (await refusal((await machineWorkspace(home, dir, remote, true)).prepare(null))).code,
    ).toBe('workspace_not_empty');
    expect(await snapshot(dir)).toEqual(before);

    // Moved out of the way, the rest is adopted on top of the base.
    await rm(path.join(dir, 'README.md'));
    const workspace = await machineWorkspace(home, dir, remote, true);
    await workspace.prepare(null);
    const checkpoint = await workspace.checkpoint({ subject: 'adopted', final: true });
    expect(checkpoint.pushed).toBe(true);
    expect(checkpoint.skipped).toEqual(['.aws/credentials']);
    expect(git(remote, 'ls-tree', '-r', '--name-only', 'baton/p').split('\n').sort()).toEqual([
      'README.md',
      'notes/todo.txt',
    ]);
    expect(await readFile(path.join(dir, '.aws/credentials'), 'utf8')).toBe(
      USER_FILES['.aws/credentials'],
    );
  });

  it('refuses an adopted project whose first checkpoint was made elsewhere; the machine that made it goes on', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const dir = path.join(root, 'mine');
    await writeFiles(dir, { 'notes/todo.txt': 'my notes\n' });
    const first = await machineWorkspace(path.join(root, 'home-a'), dir, remote, true);
    await first.prepare(null);
    const checkpoint = await first.checkpoint({ subject: 'adopted', final: true });
    expect(checkpoint.pushed).toBe(true);

    // Another machine, the same path: these files are this machine's, not what was adopted.
    const other = path.join(root, 'other');
    await writeFiles(other, { 'private.txt': 'not adopted\n' });
    const before = await snapshot(other);
    for (const lastCheckpoint of [checkpoint.head, null]) {
      const second = await machineWorkspace(path.join(root, 'home-b'), other, remote, true);
      const error = await refusal(second.prepare(lastCheckpoint));
      expect(error.code).toBe('workspace_not_empty');
      expect(error.message).toBe(
        `the workspace ${other} on this machine holds files Baton did not create, and the project already adopted its workspace at its first checkpoint; nothing in it was changed. Empty or move the directory, then resume the project.`,
      );
      expect(await snapshot(other)).toEqual(before);
    }

    // The clone that adopted it carries on, even after the agent deleted its .git link.
    await rm(path.join(dir, '.git'));
    await writeFile(path.join(dir, 'more.txt'), 'more\n');
    const again = await machineWorkspace(path.join(root, 'home-a'), dir, remote, true);
    await again.prepare(checkpoint.head);
    expect(await readFile(path.join(dir, 'notes/todo.txt'), 'utf8')).toBe('my notes\n');
  });
});
