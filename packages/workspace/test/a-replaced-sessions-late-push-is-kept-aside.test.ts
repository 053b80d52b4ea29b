import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BATON_FENCE_TRAILER,
  createProjectWorkspace,
  readTrailer,
  workspaceGitPaths,
  type ProjectWorkspace,
} from '../src/index.js';
import { createBareRemote, git, useTempDirs, writeFiles } from './support/git-fixtures.js';

/** Project `p`'s clone under `<root>/<home>`, its session holding the lease with `fence`. */
function sessionClone(
  root: string,
  home: string,
  remote: string,
  base: string,
  fence: number | undefined,
): ProjectWorkspace {
  const batonHome = path.join(root, home);
  return createProjectWorkspace({
    projectId: 'p',
    dir: path.join(batonHome, 'workspaces', 'p'),
    gitDir: workspaceGitPaths(batonHome, 'p').gitDir,
    remote,
    baseCommit: base,
    push: { attempts: 2, initialDelayMs: 10, maxDelayMs: 20 },
    fence,
  });
}

/** Every branch of the remote, name -> commit. */
function remoteBranches(remote: string): Record<string, string> {
  const listed = git(
    remote,
    'for-each-ref',
    '--format=%(refname:short) %(objectname)',
    'refs/heads',
  );
  return Object.fromEntries(listed.split('\n').map((line) => line.split(' ') as [string, string]));
}

/**
 * A remote whose branch `baton/p` sits at T0, a checkpoint of an earlier session (fence 3), and
 * two clones that start from it: the stale holder O (fence 5, its lease since lost) and the new
 * holder N (fence 6). N fetched T0 when it prepared; O's push lands only afterwards.
 */
async function raceAtT0(root: string) {
  const remote = await createBareRemote(root);
  const base = git(remote, 'rev-parse', 'main');
  const earlier = sessionClone(root, 'home-earlier', remote, base, 3);
  await earlier.prepare(null);
  await writeFiles(earlier.dir, { 'a.txt': 'a\n' });
  const t0 = (await earlier.checkpoint({ subject: 'T0', final: true })).head ?? '';
  const stale = sessionClone(root, 'home-o', remote, base, 5);
  const holder = sessionClone(root, 'home-n', remote, base, 6);
  await stale.prepare(t0);
  await holder.prepare(t0);
  return { remote, base, t0, stale, holder };
}

describe("a replaced session's late checkpoint push", () => {
  const tempDir = useTempDirs();

  it('is kept on a side branch and the holder takes the branch back; nothing is lost', async () => {
    const root = await tempDir();
    const { remote, t0, stale, holder } = await raceAtT0(root);

    // O's push of T1 lands after N fetched T0 (O's lease has moved on; git cannot know).
    await writeFiles(stale.dir, { 'o.txt': 'written by the replaced session\n' });
    const late = await stale.checkpoint({ subject: 'T1 of O' });
    expect(late.pushed).toBe(true);
    const t1 = late.head ?? '';

    await writeFiles(holder.dir, { 'n.txt': 'written by the holder\n' });
    const mine = await holder.checkpoint({ subject: 'N1' });
    const n1 = mine.head ?? '';
    expect(mine).toMatchObject({
      pushed: true,
      replacedStale: { tip: t1, fence: 5, commits: 1, keptOn: `baton-kept/p/5-${t1.slice(0, 12)}` },
    });
    expect(mine.pushError).toBeUndefined();
    expect(readTrailer(git(remote, 'log', '-1', '--format=%B', n1), BATON_FENCE_TRAILER)).toBe('6');
    // The branch holds N's work on T0; O's commit is on the side branch, not lost.
    expect(remoteBranches(remote)).toEqual({
      main: expect.any(String),
      'baton/p': n1,
      [`baton-kept/p/5-${t1.slice(0, 12)}`]: t1,
    });
    expect(git(remote, 'rev-parse', 'baton/p^')).toBe(t0);

    // O pushes again: N's commit is of a newer fence, so O never overwrites it nor keeps anything.
    await writeFiles(stale.dir, { 'o2.txt': 'more\n' });
    const again = await stale.checkpoint({ subject: 'T2 of O', final: true });
    expect(again).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(again.pushError?.message).toMatch(
      /written under fence 6, not older than this session's 5/,
    );
    expect(remoteBranches(remote)).toEqual({
      main: expect.any(String),
      'baton/p': n1,
      [`baton-kept/p/5-${t1.slice(0, 12)}`]: t1,
    });
  });

  it('replaces only exactly the stale tip it judged: a second late push meanwhile is judged too', async () => {
    const root = await tempDir();
    const { remote, t0, stale, holder } = await raceAtT0(root);
    await writeFiles(stale.dir, { 'o.txt': 'one\n' });
    const t1 = (await stale.checkpoint({ subject: 'T1 of O' })).head ?? '';
    // O's next commit reaches the remote objects but not the branch yet...
    await writeFiles(stale.dir, { 'o.txt': 'two\n' });
    const oGit = ['--git-dir', stale.gitDir, '--work-tree', stale.dir];
    git(stale.dir, ...oGit, 'add', '-A');
    git(
      stale.dir,
      ...oGit,
      'commit',
      '-q',
      '-m',
      `T2 of O\n\nBaton-Project: p\n${BATON_FENCE_TRAILER}: 5`,
    );
    const t2 = git(stale.dir, ...oGit, 'rev-parse', 'HEAD');
    git(stale.dir, ...oGit, 'push', '-q', remote, `${t2}:refs/heads/o-in-flight`);
    // ...and lands exactly while N keeps T1 aside, between N's fetch and N's push over T1.
    const hook = path.join(remote, 'hooks', 'pre-receive');
    await writeFile(
      hook,
      [
        '#!/bin/sh',
        'while read old new ref; do',
        '  case "$ref" in refs/heads/baton-kept/*)',
        '    [ -e landed ] && exit 0; touch landed',
        '    env -u GIT_QUARANTINE_PATH git update-ref refs/heads/baton/p "$(git rev-parse refs/heads/o-in-flight)" || exit 1;;',
        '  esac',
        'done',
        '',
      ].join('\n'),
    );
    await chmod(hook, 0o755);

    await writeFiles(holder.dir, { 'n.txt': 'mine\n' });
    const mine = await holder.checkpoint({ subject: 'N1' });
    const n1 = mine.head ?? '';
    expect(mine).toMatchObject({
      pushed: true,
      replacedStale: { tip: t2, fence: 5, commits: 2, keptOn: `baton-kept/p/5-${t2.slice(0, 12)}` },
    });
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(n1);
    expect(git(remote, 'rev-parse', 'baton/p^')).toBe(t0);
    // Both of O's tips are kept (T2 contains T1).
    expect(git(remote, 'rev-parse', `baton-kept/p/5-${t2.slice(0, 12)}`)).toBe(t2);
    expect(git(remote, 'rev-parse', `baton-kept/p/5-${t1.slice(0, 12)}`)).toBe(t1);
    git(remote, 'branch', '-D', 'o-in-flight');
  });

  it("never overwrites a person's commit: the checkpoint fails, and the holder's work is kept aside", async () => {
    const root = await tempDir();
    const { remote, t0, holder } = await raceAtT0(root);
    const user = path.join(root, 'user');
    git(root, 'clone', '-q', '-b', 'baton/p', remote, user);
    await writeFile(path.join(user, 'fix.txt'), 'by hand\n');
    git(user, 'add', '-A');
    git(user, 'commit', '-q', '-m', 'a fix by hand');
    git(user, 'push', '-q', 'origin', 'baton/p');
    const theirs = git(user, 'rev-parse', 'HEAD');

    await writeFiles(holder.dir, { 'n.txt': 'mine\n' });
    const mine = await holder.checkpoint({ subject: 'N1', final: true });
    const n1 = mine.head ?? '';
    expect(mine).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(mine.replacedStale).toBeUndefined();
    expect(mine.pushError?.message).toContain(
      `commit ${theirs.slice(0, 12)} ("a fix by hand") is not a Baton checkpoint of this project`,
    );
    expect(mine.pushError?.message).toContain(
      `kept on the branch baton-kept/p/6-${n1.slice(0, 12)}`,
    );
    expect(remoteBranches(remote)).toEqual({
      main: expect.any(String),
      'baton/p': theirs,
      [`baton-kept/p/6-${n1.slice(0, 12)}`]: n1,
    });
    expect(git(remote, 'rev-parse', `${theirs}^`)).toBe(t0);
  });

  it("never takes the branch back from a checkpoint without a fence (baton run's)", async () => {
    const root = await tempDir();
    const { remote, t0, holder } = await raceAtT0(root);
    // `baton run` on the same project holds no lease: its checkpoint names the project, no fence.
    const local = sessionClone(root, 'home-run', remote, t0, undefined);
    await local.prepare(t0);
    await writeFiles(local.dir, { 'r.txt': 'by baton run\n' });
    const run = (await local.checkpoint({ subject: 'R1 of baton run' })).head ?? '';
    expect(readTrailer(git(remote, 'log', '-1', '--format=%B', run), BATON_FENCE_TRAILER)).toBe(
      null,
    );

    await writeFiles(holder.dir, { 'n.txt': 'mine\n' });
    const mine = await holder.checkpoint({ subject: 'N1', final: true });
    expect(mine).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(mine.replacedStale).toBeUndefined();
    expect(mine.pushError?.message).toContain(
      `commit ${run.slice(0, 12)} ("R1 of baton run") carries no ${BATON_FENCE_TRAILER} trailer`,
    );
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(run);
    expect(git(remote, 'rev-parse', `${run}^`)).toBe(t0);
  });

  it('reads a fence only as plain digits: "0x1" proves nothing', async () => {
    const root = await tempDir();
    const { remote, holder, stale } = await raceAtT0(root);
    await writeFiles(stale.dir, { 'o.txt': 'odd\n' });
    const oGit = ['--git-dir', stale.gitDir, '--work-tree', stale.dir];
    git(stale.dir, ...oGit, 'add', '-A');
    git(
      stale.dir,
      ...oGit,
      'commit',
      '-q',
      '-m',
      `odd\n\nBaton-Project: p\n${BATON_FENCE_TRAILER}: 0x1`,
    );
    const odd = git(stale.dir, ...oGit, 'rev-parse', 'HEAD');
    git(stale.dir, ...oGit, 'push', '-q', remote, `${odd}:refs/heads/baton/p`);

    await writeFiles(holder.dir, { 'n.txt': 'mine\n' });
    const mine = await holder.checkpoint({ subject: 'N1', final: true });
    expect(mine).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(mine.pushError?.message).toContain(`carries no ${BATON_FENCE_TRAILER} trailer`);
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(odd);
  });

  it('without a lease (baton run) every rejection stands, as before', async () => {
    const root = await tempDir();
    const remote = await createBareRemote(root);
    const base = git(remote, 'rev-parse', 'main');
    const first = sessionClone(root, 'home-a', remote, base, undefined);
    const second = sessionClone(root, 'home-b', remote, base, undefined);
    await first.prepare(null);
    await second.prepare(null);
    await writeFiles(first.dir, { 'a.txt': 'a\n' });
    const landed = await first.checkpoint({ subject: 'a' });
    expect(git(remote, 'log', '-1', '--format=%B', landed.head ?? '')).not.toContain(
      BATON_FENCE_TRAILER,
    );
    await writeFiles(second.dir, { 'b.txt': 'b\n' });
    const refused = await second.checkpoint({ subject: 'b' });
    expect(refused).toMatchObject({ pushed: false, pushError: { code: 'push_rejected' } });
    expect(git(remote, 'rev-parse', 'baton/p')).toBe(landed.head);
  });
});
