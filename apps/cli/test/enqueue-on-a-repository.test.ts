import path from 'node:path';
import { checkoutFingerprint, createUserRepo, git } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { startCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton enqueue --repo', () => {
  it('bad --repo or --base, or a foreign baton/<id> branch: one line, exit 2, nothing created', async () => {
    const { redis } = world;
    const repo = await createUserRepo(world.dir);
    const taken = redis.projectId('taken');
    git(repo, 'branch', `baton/${taken}`, 'main');
    const refs = git(repo, 'for-each-ref');
    const cases: Array<[string[], RegExp]> = [
      [['--repo', path.join(world.dir, 'nope')], /no such directory/],
      [['--repo', world.dir], /cannot read the repository/],
      [['--repo', repo, '--base', 'nope'], /has no branch nope/],
      [['--repo', repo, '--base', 'bad..name'], /not a valid branch name/],
      [['--repo', 'https://user:secret@example.invalid/r.git'], /has credentials in it/],
      [['--base', 'main'], /--base needs --repo/],
    ];
    for (const [args, message] of cases) {
      const id = redis.projectId('bad');
      const result = await world.cli(['enqueue', '--project', id, '--goal', 'x', ...args]);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr).not.toContain('secret');
      expect(await redis.control.getProject(id)).toBeNull();
    }
    const foreign = await world.cli(['enqueue', '--project', taken, '--goal', 'x', '--repo', repo]);
    expect(foreign.code).toBe(2);
    expect(oneLine(foreign.stderr)).toContain(`already has a branch baton/${taken}`);
    expect(await redis.control.getProject(taken)).toBeNull();
    expect(git(repo, 'for-each-ref')).toBe(refs);
    expect((await redis.control.queueCounts()).waiting).toBe(0);
  });

  it('a worker runs it on its own clone; status and diff show the branch, checkpoint and commits; the checkout is untouched', async () => {
    const { redis } = world;
    const repo = await createUserRepo(world.dir);
    const before = await checkoutFingerprint(repo);
    const id = redis.projectId('repo');
    // A relative --repo is resolved where enqueue runs; the base defaults to the checked-out branch.
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      'Greet\n- hello\n- bye',
      '--repo',
      'user-repo',
    ]);
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    const baseCommit = git(repo, 'rev-parse', 'feature');
    expect(enqueued.stdout).toContain(
      `on baton/${id} of ${repo} from feature (${baseCommit.slice(0, 12)})`,
    );

    const workerHome = path.join(world.dir, 'worker-home');
    const worker = startCli(['worker', '--port', '0'], {
      cwd: world.dir,
      env: redis.env(workerHome, { BATON_MODEL: 'sim', BATON_CHAIN_DELAY_MS: '0' }),
    });
    let status: {
      status: string;
      lastCheckpoint: string | null;
      sessionCommits?: Array<{ commits: string[] }>;
    } = { status: '', lastCheckpoint: null };
    try {
      await worker.waitForOutput('"worker started"');
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const result = await world.cli(['status', id, '--json']);
        status = JSON.parse(result.stdout) as typeof status;
        if (status.status === 'completed' || status.status === 'failed') break;
      }
    } finally {
      worker.kill('SIGTERM');
    }
    await worker.done;
    expect(status.status).toBe('completed');
    const head = git(repo, 'rev-parse', `baton/${id}`);
    expect(status).toMatchObject({
      repo,
      base: 'feature',
      baseCommit,
      branch: `baton/${id}`,
      lastCheckpoint: head,
      skipHooks: false,
    });
    expect(await checkoutFingerprint(repo)).toEqual(before);
    const listed = (status.sessionCommits ?? []).flatMap((session) => session.commits);
    expect(listed.at(-1)).toBe(head);

    const text = await world.cli(['status', id]);
    expect(text.stdout).toContain(`repo      ${repo}`);
    expect(text.stdout).toContain(`base      feature (${baseCommit.slice(0, 12)})`);
    expect(text.stdout).toContain(`branch    baton/${id}`);
    expect(text.stdout).toContain(`checkpoint ${head.slice(0, 12)}`);
    const commits = git(repo, 'rev-list', `feature..baton/${id}`).split('\n');
    expect(text.stdout).toMatch(/commits\n {2}session 1 \(completed\): [0-9a-f]{12}/);
    for (const commit of commits) expect(text.stdout).toContain(commit.slice(0, 12));

    const diff = await world.cli(['diff', id, '--stat']);
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('features/f2.sh');
    expect(diff.stdout).not.toContain('src/feature.js');
  });
});
