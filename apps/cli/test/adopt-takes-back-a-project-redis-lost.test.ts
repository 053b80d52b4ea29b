import path from 'node:path';
import { createUserRepo, git } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

const GOAL = 'Greet\n- hello\n- bye';

describe('baton adopt: the branch of a project Redis lost is listed and taken back', () => {
  it('--list names it (not a branch whose project Redis knows); adopting it continues on its code', async () => {
    const { dir, redis, cli } = world;
    const repo = await createUserRepo(dir);
    const id = redis.projectId('lost');
    const runToCompletion = async (home: string) => {
      const worker = world.startWorker(home, { BATON_CHAIN_DELAY_MS: '0' });
      await world.waitForCompleted(id);
      worker.kill('SIGTERM');
      await worker.done;
    };

    expect((await cli(['enqueue', '--project', id, '--goal', GOAL, '--repo', repo])).code).toBe(0);
    await runToCompletion('worker-1');
    const head = git(repo, 'rev-parse', `baton/${id}`);
    // A project Redis still knows, with a branch of that name: not lost, not listed.
    const known = redis.projectId('known');
    git(repo, 'branch', `baton/${known}`, 'main');
    await redis.control.createProject({ id: known, goal: '- a' });

    // Redis loses the project: record, events and memory. The branch is all that is left.
    await redis.control.deleteProject(id);

    const listed = await cli(['adopt', '--list', repo]);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      `baton/${id}  ${head.slice(0, 12)}  baton adopt ${repo} baton/${id} --goal ...\n`,
    );
    const json = await cli(['adopt', '--list', repo, '--json']);
    expect(JSON.parse(json.stdout)).toEqual([{ projectId: id, branch: `baton/${id}`, head }]);

    // Refused in one line each, nothing created.
    const refusals: Array<[string[], RegExp]> = [
      [['adopt', repo, 'main', '--goal', 'x'], /main is not a project branch/],
      [['adopt', repo, `baton/${known}`, '--goal', 'x'], /exists in Redis: nothing to adopt/],
      [['adopt', repo, `baton/${id}`], /give exactly one of --goal and --goal-file/],
      [['adopt', repo, 'baton/none-1', '--goal', 'x'], /has no branch baton\/none-1/],
      [['adopt', path.join(dir, 'nope'), `baton/${id}`, '--goal', 'x'], /no such directory/],
    ];
    for (const [args, message] of refusals) {
      const refused = await cli(args);
      expect(refused.code, args.join(' ')).not.toBe(0);
      expect(oneLine(refused.stderr), args.join(' ')).toMatch(message);
    }
    expect(await redis.control.getProject(id)).toBeNull();

    const adopted = await cli(['adopt', repo, `baton/${id}`, '--goal', GOAL]);
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain(
      `adopted baton/${id} of ${repo} at ${head.slice(0, 12)} as project ${id} (job ${id}@1)`,
    );
    const status = JSON.parse((await cli(['status', id, '--json'])).stdout) as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({ status: 'queued', sessions: 0, lastCheckpoint: head });
    expect((await cli(['adopt', '--list', repo])).stdout).not.toContain(`baton/${id}`);

    await runToCompletion('worker-2');
    // The new project started from the branch's code, on a fresh worker's clone (an init
    // session: its memory was lost), and never rewound the branch.
    const events = (await redis.control.readEvents(id, { count: 10_000 })).map(
      ({ event }) => event,
    );
    expect(events.find((event) => event.type === 'workspace-prepared')).toMatchObject({
      sessionNumber: 1,
      branch: `baton/${id}`,
      head,
    });
    expect(events.find((event) => event.type === 'session-start')).toMatchObject({
      kind: 'init',
      sessionNumber: 1,
    });
    git(repo, 'merge-base', '--is-ancestor', head, `baton/${id}`);
  }, 240_000);
});
