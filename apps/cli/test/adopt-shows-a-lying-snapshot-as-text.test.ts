import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createUserRepo, git } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

/** OSC 52 (write the clipboard) and a screen clear: what a terminal acts on. */
const ESCAPES = '\u001b]52;c;aGk=\u0007\u001b[2J';

/**
 * Branch `baton/<id>` of `repo` (a Baton checkpoint of `id`) and, as a remote that lies could hand
 * over, a snapshot ref of `id` holding `manifest` and `memories/progress.md`.
 */
async function lyingRemote(repo: string, id: string, manifest: Record<string, unknown>) {
  git(repo, 'checkout', '-q', '-b', `baton/${id}`);
  git(repo, 'commit', '-q', '--allow-empty', '-m', `work\n\nBaton-Project: ${id}`);
  git(repo, 'checkout', '-q', 'main');
  const tree = await mkdtemp(path.join(path.dirname(repo), 'snapshot-'));
  await mkdir(path.join(tree, 'memories'));
  await writeFile(path.join(tree, 'manifest.json'), JSON.stringify(manifest));
  await writeFile(path.join(tree, 'memories', 'progress.md'), '# progress\n');
  const env = { ...process.env, GIT_INDEX_FILE: path.join(tree, '..', 'snapshot-index') };
  const plumbing = (...args: string[]) =>
    execFileSync('git', ['--git-dir', path.join(repo, '.git'), '--work-tree', tree, ...args], {
      env,
      encoding: 'utf8',
    }).trim();
  plumbing('add', '-A');
  const commit = plumbing('commit-tree', plumbing('write-tree'), '-m', 'snapshot');
  git(repo, 'update-ref', `refs/baton/memory/${id}`, commit);
  await rm(tree, { recursive: true, force: true });
}

/** True when `text` holds BEL or ESC, the characters OSC and CSI sequences need. */
function hasControls(text: string): boolean {
  return text.includes('\u0007') || text.includes('\u001b');
}

function manifestOf(projectId: string, withheld: Array<{ path: string; reason: string }>) {
  return {
    format: 1,
    projectId,
    goal: '- hello',
    sessionNumber: 2,
    fenceToken: 4,
    createdAt: '2026-12-04T00:00:00.000Z',
    files: ['progress.md'],
    withheld,
  };
}

describe('baton adopt shows what a lying remote put in a memory snapshot as text', () => {
  it("a manifest naming another project: the one-line refusal escapes the remote's control characters", async () => {
    const { dir, redis, cli } = world;
    const repo = await createUserRepo(dir);
    const id = redis.projectId('lie');
    await lyingRemote(repo, id, manifestOf(`other${ESCAPES}`, []));
    const refused = await cli(['adopt', repo, `baton/${id}`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('memory snapshot unreadable: it belongs to project other');
    expect(hasControls(refused.stderr)).toBe(false);
    expect(refused.stderr).toContain('\\u{1b}]52;c;aGk=\\u{7}');
    expect(await redis.control.getProject(id)).toBeNull();
  }, 60_000);

  it('withheld paths in the manifest reach the terminal escaped; the memory is restored', async () => {
    const { dir, redis, cli } = world;
    const repo = await createUserRepo(dir);
    const id = redis.projectId('withheld');
    await lyingRemote(
      repo,
      id,
      manifestOf(id, [{ path: `${ESCAPES}.env`, reason: 'secret_file_name' }]),
    );
    const adopted = await cli(['adopt', repo, `baton/${id}`]);
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    expect(hasControls(adopted.stdout)).toBe(false);
    expect(adopted.stdout).toContain(
      'withheld when it was saved: \\u{1b}]52;c;aGk=\\u{7}\\u{1b}[2J.env (secret_file_name)',
    );
    const store = await redis.control.memoryStore(id);
    try {
      expect(await store.read('progress.md')).toBe('# progress\n');
    } finally {
      await store.close();
    }
  }, 60_000);
});
