import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffProjectBranch } from '../src/index.js';
import { createUserRepo, git, useTempDirs, writeFiles } from './support/git-fixtures.js';

/**
 * `baton diff` (and the dashboard's diff view) fetch into one bare cache per project under
 * `BATON_HOME/cache`. The first diffs of a project can run at once (two terminals, a script, two
 * dashboard requests): they must all succeed, whichever of them creates the cache.
 */
describe('diffs of one project at once', () => {
  const tempDir = useTempDirs();

  it('the first diffs at once all create or share the cache and all succeed', async () => {
    const root = await tempDir();
    const repo = await createUserRepo(root);
    const base = git(repo, 'rev-parse', 'main');
    git(repo, 'checkout', '-q', '-b', 'baton/p', 'main');
    await writeFiles(repo, { 'hello.txt': 'hello\n' });
    git(repo, 'add', 'hello.txt');
    git(repo, 'commit', '-q', '-m', 'hello');
    const head = git(repo, 'rev-parse', 'HEAD');
    const cache = path.join(root, 'home', 'cache', 'p.git');

    // Several rounds: each starts from no cache, with eight diffs at once.
    for (let round = 0; round < 5; round += 1) {
      const cacheDir = `${cache}-${round}`;
      const diffs = await Promise.allSettled(
        Array.from({ length: 8 }, () =>
          diffProjectBranch({ projectId: 'p', remote: repo, baseCommit: base, cacheDir }),
        ),
      );
      for (const diff of diffs) {
        expect(diff.status === 'rejected' ? String(diff.reason) : '').toBe('');
        expect(diff).toMatchObject({
          status: 'fulfilled',
          value: { head, commits: [{ sha: head, subject: 'hello' }] },
        });
      }
      // Nothing left beside the cache but the caches themselves (no temporary directory).
      expect(git(cacheDir, 'rev-parse', '--is-bare-repository')).toBe('true');
    }
    expect((await readdir(path.dirname(cache))).sort()).toEqual(
      Array.from({ length: 5 }, (_, round) => `p.git-${round}`),
    );
  }, 120_000);
});
