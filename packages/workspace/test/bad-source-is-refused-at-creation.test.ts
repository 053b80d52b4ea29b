import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkspaceError, normalizeRepo, resolveProjectSource } from '../src/index.js';
import {
  createBareRemote,
  createUserRepo,
  git,
  useTempDirs,
  writeFiles,
} from './support/git-fixtures.js';

async function refusal(promise: Promise<unknown>): Promise<WorkspaceError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(WorkspaceError);
  const workspaceError = error as WorkspaceError;
  expect(workspaceError.message).not.toContain('\n');
  return workspaceError;
}

describe('a project source', () => {
  const tempDir = useTempDirs();

  it('defaults the base to the current branch of a path and the default branch of a remote', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    expect((await resolveProjectSource({ repo, projectId: 'p' })).base).toBe('feature');
    const main = await resolveProjectSource({ repo, base: 'main', projectId: 'p' });
    expect(main.baseCommit).toBe(git(repo, 'rev-parse', 'main'));
    const bare = await createBareRemote(root);
    const remote = await resolveProjectSource({ repo: `file://${bare}`, projectId: 'p' });
    expect(remote).toMatchObject({ repo: `file://${bare}`, base: 'main' });
    const relative = await resolveProjectSource({ repo: 'user-repo', cwd: root, projectId: 'p' });
    expect(relative.repo).toBe(repo);
  });

  it('refuses what cannot be cloned, a missing or invalid base, and a foreign baton/<id> branch, writing nothing', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const plain = path.join(root, 'plain');
    await mkdir(plain);
    const refsBefore = git(repo, 'for-each-ref');

    expect(
      (await refusal(resolveProjectSource({ repo: path.join(root, 'nope'), projectId: 'p' }))).code,
    ).toBe('repo_unreachable');
    const notRepo = await refusal(resolveProjectSource({ repo: plain, projectId: 'p' }));
    expect(notRepo.code).toBe('repo_unreachable');
    expect(notRepo.message).toContain(plain);
    const unreachable = await refusal(
      resolveProjectSource({ repo: 'http://127.0.0.1:9/nothing.git', projectId: 'p' }),
    );
    expect(unreachable.code).toBe('repo_unreachable');
    expect((await refusal(resolveProjectSource({ repo, base: 'nope', projectId: 'p' }))).code).toBe(
      'base_not_found',
    );
    expect((await refusal(resolveProjectSource({ repo, base: 'a..b', projectId: 'p' }))).code).toBe(
      'invalid_base',
    );
    expect(
      (await refusal(resolveProjectSource({ repo, base: '--upload-pack=x', projectId: 'p' }))).code,
    ).toBe('invalid_base');

    // A branch with the project's name the user made themselves.
    git(repo, 'branch', 'baton/p', 'main');
    const taken = await refusal(resolveProjectSource({ repo, projectId: 'p' }));
    expect(taken.code).toBe('branch_taken');
    expect(taken.message).toContain('baton/p');
    git(repo, 'branch', '-D', 'baton/p');
    expect(git(repo, 'for-each-ref')).toBe(refsBefore);
    expect(await readdir(plain)).toEqual([]);
  });

  it('adopts a baton/<id> branch whose tip Baton made for this project', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const side = path.join(root, 'side');
    git(root, 'clone', '-q', repo, side);
    await writeFiles(side, { 'x.txt': 'x\n' });
    git(side, 'add', '-A');
    git(side, 'commit', '-q', '-m', 'baton: session 1\n\nBaton-Project: p');
    git(side, 'push', '-q', 'origin', 'HEAD:refs/heads/baton/p');
    const source = await resolveProjectSource({ repo, projectId: 'p' });
    expect(source.existingHead).toBe(git(side, 'rev-parse', 'HEAD'));
    // The same branch is foreign to a project with another id.
    git(side, 'push', '-q', 'origin', 'HEAD:refs/heads/baton/q');
    expect((await refusal(resolveProjectSource({ repo, projectId: 'q' }))).code).toBe(
      'branch_taken',
    );
  });

  it('refuses credentials in a URL and option-like or helper repositories', async () => {
    for (const repo of [
      'https://user:secret@example.com/r.git',
      'https://ghp_abcdefabcdefabcdefabcdefabcdef@github.com/r.git',
      '--upload-pack=touch /tmp/x',
      'ext::sh -c touch% /tmp/x',
      '',
    ]) {
      const error = (() => {
        try {
          normalizeRepo(repo);
          return undefined;
        } catch (caught) {
          return caught as WorkspaceError;
        }
      })();
      expect(error?.code, repo).toBe('invalid_repo');
      expect(error?.message).not.toContain('secret');
      expect(error?.message).not.toContain('ghp_');
    }
    expect(normalizeRepo('ssh://git@example.com/r.git')).toBe('ssh://git@example.com/r.git');
    expect(normalizeRepo('git@example.com:team/r.git')).toBe('git@example.com:team/r.git');
    const root = await tempDir();
    await writeFile(path.join(root, 'f'), '');
    expect(normalizeRepo('./f', root)).toBe(path.join(root, 'f'));
  });
});
