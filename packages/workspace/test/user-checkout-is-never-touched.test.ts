import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProjectWorkspace, resolveProjectSource, workspaceGitPaths } from '../src/index.js';
import { checkoutFingerprint, createUserRepo, git, useTempDirs } from './support/git-fixtures.js';

describe("the user's checkout", () => {
  const tempDir = useTempDirs();

  it('is byte-identical after checkpoints; the work lands on baton/<id> in the same repository', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const before = await checkoutFingerprint(repo);

    const source = await resolveProjectSource({ repo, projectId: 'todo' });
    expect(source.base).toBe('feature');
    expect(source.baseCommit).toBe(git(repo, 'rev-parse', 'feature'));
    expect(source.branch).toBe('baton/todo');
    expect(source.existingHead).toBeNull();

    const home = path.join(root, 'home');
    const paths = workspaceGitPaths(home, 'todo');
    const workspace = createProjectWorkspace({
      projectId: 'todo',
      dir: path.join(home, 'workspaces', 'todo'),
      gitDir: paths.gitDir,
      remote: source.repo,
      baseCommit: source.baseCommit,
    });
    const prepared = await workspace.prepare(null);
    expect(prepared.head).toBe(source.baseCommit);
    // The clone starts from the committed base: none of the user's uncommitted work is in it.
    expect(await readFile(path.join(workspace.dir, 'src/feature.js'), 'utf8')).toContain('f = 1');
    expect(await readFile(path.join(workspace.dir, 'src/app.js'), 'utf8')).toBe(
      'console.log(1);\n',
    );
    await expect(readFile(path.join(workspace.dir, 'notes.txt'))).rejects.toThrow();

    await writeFile(path.join(workspace.dir, 'todo.js'), 'export const todo = [];\n');
    const first = await workspace.checkpoint({
      subject: 'baton: session 1',
      trailers: [['Session-Id', 's1']],
    });
    expect(first.pushed).toBe(true);
    await writeFile(path.join(workspace.dir, 'src/app.js'), 'console.log("baton");\n');
    const second = await workspace.checkpoint({ subject: 'baton: session 1 end', final: true });
    expect(second.pushed).toBe(true);

    expect(await checkoutFingerprint(repo)).toEqual(before);
    expect(git(repo, 'rev-parse', 'baton/todo')).toBe(second.commit);
    expect(git(repo, 'show', 'baton/todo:todo.js')).toBe('export const todo = [];');
    expect(git(repo, 'show', 'baton/todo:src/app.js')).toBe('console.log("baton");');
    expect(git(repo, 'merge-base', '--is-ancestor', source.baseCommit, 'baton/todo')).toBe('');
    expect(git(repo, 'log', '-1', '--format=%B', 'baton/todo')).toContain('Baton-Project: todo');
    expect(git(repo, 'log', '-1', '--format=%B', first.commit!)).toContain('Session-Id: s1');
  });
});
