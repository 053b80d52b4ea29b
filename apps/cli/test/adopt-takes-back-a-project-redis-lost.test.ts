import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createUserRepo, git, waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

const GOAL = 'Greet\n- hello\n- bye';

/** Runs `baton worker` (the simulator) on `id` until the project is `status`; stops it. */
async function runUntil(
  id: string,
  status: 'completed' | 'paused',
  home: string,
  extra: Record<string, string> = {},
): Promise<void> {
  const worker = world.startWorker(home, { BATON_CHAIN_DELAY_MS: '0', ...extra });
  if (status === 'completed') {
    await world.waitForCompleted(id);
  } else {
    await waitFor(
      `${id} ${status}`,
      async () => {
        const project = await world.redis.control.getProject(id);
        if (project?.status === 'failed') throw new Error(`failed: ${project.statusReason}`);
        return project?.status === status;
      },
      90_000,
      100,
    );
  }
  worker.kill('SIGTERM');
  await worker.done;
}

async function eventsOf(id: string) {
  return (await world.redis.control.readEvents(id, { count: 10_000 })).map(({ event }) => event);
}

async function writeMemoryFile(id: string, file: string, content: string): Promise<void> {
  const store = await world.redis.control.memoryStore(id);
  try {
    await store.write(file, content, { mode: 'create' });
  } finally {
    await store.close();
  }
}

async function memoryFile(id: string, file: string): Promise<string | null> {
  const store = await world.redis.control.memoryStore(id);
  try {
    return await store.read(file);
  } finally {
    await store.close();
  }
}

describe('baton adopt: the branch of a project Redis lost is listed and taken back', () => {
  it('--list names it with its memory snapshot; adopting it restores memory and goal and resumes the checklist', async () => {
    const { dir, redis, cli } = world;
    const repo = await createUserRepo(dir);
    const id = redis.projectId('lost');

    // Two sessions: the init session writes the checklist, the next one makes `hello` pass.
    const enqueue = [
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--repo',
      repo,
      '--max-sessions',
      '2',
    ];
    expect((await cli(enqueue)).code).toBe(0);
    await runUntil(id, 'paused', 'worker-1');
    const head = git(repo, 'rev-parse', `baton/${id}`);
    // The memory snapshot is a ref of its own in the user's repository, not a branch.
    const snapshot = git(repo, 'rev-parse', `refs/baton/memory/${id}`);
    expect(git(dir, 'ls-remote', repo, `refs/baton/memory/${id}`)).toBe(
      `${snapshot}\trefs/baton/memory/${id}`,
    );
    expect(git(repo, 'branch', '--list')).not.toContain('memory');
    expect(JSON.parse(git(repo, 'show', `${snapshot}:manifest.json`))).toMatchObject({
      format: 1,
      projectId: id,
      goal: GOAL,
      sessionNumber: 2,
      fenceToken: expect.any(Number),
      withheld: [],
    });
    expect(git(repo, 'show', `${snapshot}:memories/features.json`)).toContain('"passes": true');
    expect((await eventsOf(id)).filter((event) => event.type === 'memory-snapshot')).toContainEqual(
      expect.objectContaining({ commit: snapshot, pushed: true }),
    );
    // A project Redis still knows, with a branch of that name: not lost, not listed.
    const known = redis.projectId('known');
    git(repo, 'branch', `baton/${known}`, 'main');
    await redis.control.createProject({ id: known, goal: '- a' });

    // Redis loses the project: record, events and memory. The branch and the snapshot are left.
    await redis.control.deleteProject(id);

    const listed = await cli(['adopt', '--list', repo]);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      `baton/${id}  ${head.slice(0, 12)}  memory ${snapshot.slice(0, 12)}  baton adopt ${repo} baton/${id}\n`,
    );
    const json = await cli(['adopt', '--list', repo, '--json']);
    expect(JSON.parse(json.stdout)).toEqual([
      { projectId: id, branch: `baton/${id}`, head, memorySnapshot: snapshot },
    ]);

    // Refused in one line each, nothing created.
    const goalFile = path.join(dir, 'goal.txt');
    await writeFile(goalFile, GOAL);
    const refusals: Array<[string[], RegExp]> = [
      [['adopt', repo, 'main', '--goal', 'x'], /main is not a project branch/],
      [['adopt', repo, `baton/${known}`, '--goal', 'x'], /exists in Redis: nothing to adopt/],
      [['adopt', repo, `baton/${id}`, '--goal', 'x', '--goal-file', goalFile], /at most one of/],
      [['adopt', repo, 'baton/none-1', '--goal', 'x'], /has no branch baton\/none-1/],
      [['adopt', path.join(dir, 'nope'), `baton/${id}`, '--goal', 'x'], /no such directory/],
    ];
    for (const [args, message] of refusals) {
      const refused = await cli(args);
      expect(refused.code, args.join(' ')).not.toBe(0);
      expect(oneLine(refused.stderr), args.join(' ')).toMatch(message);
    }
    expect(await redis.control.getProject(id)).toBeNull();

    // The restore is refused part-way: a fragment left in the lost project's memory namespace
    // (as a session still running when Redis was wiped writes) makes progress.md a directory, so
    // its write is refused after features.json was written. Adopt removes the project and its
    // memory, says so in one line, and re-running it works.
    await writeMemoryFile(id, 'progress.md/fragment', 'left by a session of the lost Redis');
    const failed = await cli(['adopt', repo, `baton/${id}`]);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toBe('');
    expect(oneLine(failed.stderr)).toMatch(
      new RegExp(
        `^baton: adopting baton/${id} failed while restoring its memory: .*progress\\.md.*; nothing was adopted \\(the project and the memory written were removed\\), so the command can be re-run\\.$`,
      ),
    );
    expect(await redis.control.getProject(id)).toBeNull();
    expect(await memoryFile(id, 'features.json')).toBeNull();
    expect(await memoryFile(id, 'progress.md/fragment')).toBeNull();
    expect((await cli(['adopt', '--list', repo])).stdout).toContain(`baton/${id}`);

    // No --goal: the goal and the memory come from the snapshot.
    const adopted = await cli(['adopt', repo, `baton/${id}`]);
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain(
      `adopted baton/${id} of ${repo} at ${head.slice(0, 12)} as project ${id} (job ${id}@1)`,
    );
    expect(adopted.stdout).toContain(
      `memory restored from snapshot ${snapshot.slice(0, 12)} (session 2, 3 files), goal from the snapshot; its first session resumes from it`,
    );
    const status = JSON.parse((await cli(['status', id, '--json'])).stdout) as Record<
      string,
      unknown
    >;
    expect(status).toMatchObject({
      status: 'queued',
      sessions: 0,
      lastCheckpoint: head,
      goal: GOAL,
    });
    expect(await memoryFile(id, 'progress.md')).toContain('(init)');
    expect((await cli(['adopt', '--list', repo])).stdout).not.toContain(`baton/${id}`);

    await runUntil(id, 'completed', 'worker-2');
    // A fresh worker's clone started from the branch's code and the restored checklist: a resume
    // session that did the one feature left, never an init session; the branch only moved on.
    const events = await eventsOf(id);
    expect(events.find((event) => event.type === 'workspace-prepared')).toMatchObject({
      sessionNumber: 1,
      branch: `baton/${id}`,
      head,
    });
    const starts = events.filter((event) => event.type === 'session-start');
    expect(starts[0]).toMatchObject({ kind: 'resume', sessionNumber: 1 });
    expect(starts.map((event) => (event as { kind?: string }).kind)).not.toContain('init');
    const features = JSON.parse((await memoryFile(id, 'features.json')) ?? '[]') as Array<{
      passes: boolean;
    }>;
    expect(features.map((feature) => feature.passes)).toEqual([true, true]);
    // The old project's log continues in the new one.
    expect(await memoryFile(id, 'progress.md')).toMatch(/\(init\)[\s\S]*## Session 1\b/);
    git(repo, 'merge-base', '--is-ancestor', head, `baton/${id}`);
    git(repo, 'merge-base', '--is-ancestor', snapshot, `refs/baton/memory/${id}`);
  }, 300_000);

  it('BATON_MEMORY_SNAPSHOTS=off writes none; adopting then needs the goal and memory starts empty (an init session)', async () => {
    const { dir, redis, cli } = world;
    const repo = await createUserRepo(dir);
    const id = redis.projectId('bare');
    const enqueue = [
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--repo',
      repo,
      '--max-sessions',
      '1',
    ];
    expect((await cli(enqueue)).code).toBe(0);
    await runUntil(id, 'paused', 'worker-off', { BATON_MEMORY_SNAPSHOTS: 'off' });
    expect(git(dir, 'ls-remote', repo, 'refs/baton/memory/*')).toBe('');
    expect((await eventsOf(id)).some((event) => event.type === 'memory-snapshot')).toBe(false);
    await redis.control.deleteProject(id);

    const head = git(repo, 'rev-parse', `baton/${id}`);
    expect((await cli(['adopt', '--list', repo])).stdout).toBe(
      `baton/${id}  ${head.slice(0, 12)}  no memory snapshot  baton adopt ${repo} baton/${id} --goal ...\n`,
    );
    const refused = await cli(['adopt', repo, `baton/${id}`]);
    expect(refused.code).not.toBe(0);
    expect(oneLine(refused.stderr)).toMatch(
      new RegExp(`give --goal or --goal-file: no memory snapshot \\(refs/baton/memory/${id}\\)`),
    );
    const adopted = await cli(['adopt', repo, `baton/${id}`, '--goal', GOAL]);
    expect(adopted.code).toBe(0);
    expect(adopted.stdout.split('\n')[1]).toBe(
      `no memory snapshot (refs/baton/memory/${id}): its memory starts empty, so its first session is an init session on the branch's code`,
    );
    expect(await memoryFile(id, 'features.json')).toBeNull();
  }, 180_000);
});
