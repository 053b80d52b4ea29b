import { truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createUserRepo, git, repoWorkspace, useTempDirs } from './support/git-fixtures.js';

async function open(root: string, maxFileBytes?: number) {
  const repo = await createUserRepo(root);
  const workspace = await repoWorkspace(root, repo, { maxFileBytes });
  await workspace.prepare(null);
  return { repo, workspace };
}

describe('files over the size limit', () => {
  const tempDir = useTempDirs();

  it('are left out of the checkpoint with their size; the rest is committed and pushed', async () => {
    const root = await tempDir();
    const { repo, workspace } = await open(root, 1024);
    await writeFile(path.join(workspace.dir, 'small.txt'), 'x'.repeat(1024));
    await writeFile(path.join(workspace.dir, 'big.bin'), 'x'.repeat(1025));
    const checkpoint = await workspace.checkpoint({ subject: 'a' });
    expect(checkpoint.tooLarge).toEqual([{ path: 'big.bin', bytes: 1025 }]);
    expect(checkpoint.pushed).toBe(true);
    expect(git(repo, 'ls-tree', '--name-only', 'baton/p').split('\n')).toContain('small.txt');
    expect(git(repo, 'ls-tree', '--name-only', 'baton/p')).not.toContain('big.bin');
    // A file that was committed and then grows keeps its last committed version.
    await writeFile(path.join(workspace.dir, 'small.txt'), 'y'.repeat(2000));
    const grown = await workspace.checkpoint({ subject: 'b' });
    expect(grown.tooLarge).toEqual([
      { path: 'big.bin', bytes: 1025 },
      { path: 'small.txt', bytes: 2000 },
    ]);
    expect(grown.commit).toBeNull();
    expect(git(repo, 'show', 'baton/p:small.txt')).toBe('x'.repeat(1024));
  });

  it('default to 50 MiB: a 300 MB file the agent wrote is never pushed', async () => {
    const root = await tempDir();
    const { repo, workspace } = await open(root);
    const file = path.join(workspace.dir, 'dump.bin');
    await writeFile(file, '');
    await truncate(file, 300 * 1024 * 1024);
    await writeFile(path.join(workspace.dir, 'a.txt'), 'a\n');
    const checkpoint = await workspace.checkpoint({ subject: 'a' });
    expect(checkpoint.tooLarge).toEqual([{ path: 'dump.bin', bytes: 300 * 1024 * 1024 }]);
    expect(git(repo, 'ls-tree', '--name-only', 'baton/p')).not.toContain('dump.bin');
  });
});
