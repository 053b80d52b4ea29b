import { SESSION_QUEUE_NAME, createSessionQueue, sessionJobId } from '@baton/projects';
import { REDIS_URL } from '@baton/test-support';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

const OOM = "OOM command not allowed when used memory > 'maxmemory'.";

describe('baton status says why nothing runs a project, and the one command that fixes it', () => {
  it('a running project whose session job failed shows the job failure and `baton resume`, which fixes it', async () => {
    const { redis } = world;
    const id = redis.projectId('stuck');
    const project = await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.transition(id, 'running', { reason: 'session 1' });
    // What a Redis fault on the chaining path leaves: the session's job in BullMQ's failed set,
    // failed by a processor that met a full Redis.
    const queue = createSessionQueue({
      connection: redis.repository.redis,
      keys: redis.control.keys,
    });
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const worker = new Worker(SESSION_QUEUE_NAME, () => Promise.reject(new Error(OOM)), {
      connection,
      prefix: redis.control.keys.prefix,
      autorun: false,
    });
    try {
      const failed = new Promise((resolve) => worker.once('failed', resolve));
      void worker.run();
      await queue.add(
        'chain',
        { projectId: id, sessionNumber: 1, reason: 'chain', generation: project.createdAt },
        { jobId: sessionJobId(id, 1) },
      );
      await failed;
    } finally {
      await worker.close();
      await queue.close();
      connection.disconnect();
    }

    const shown = await world.cli(['status', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(
      /^problem\s+running but the job of session 1 failed: OOM command not allowed/mu,
    );
    expect(shown.stdout).toMatch(new RegExp(`^fix\\s+baton resume ${id}$`, 'mu'));
    const json = await world.cli(['status', id, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      stuck: { jobFailure: OOM, fix: `baton resume ${id}`, sessionNumber: 1 },
    });

    const resumed = await world.cli(['resume', id]);
    expect(resumed.code).toBe(0);
    const after = await world.cli(['status', id, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ status: 'queued', stuck: null });
  });

  it('a queued project with no job and no worker says so; a failed one names `baton resume`', async () => {
    const { redis } = world;
    const id = redis.projectId('stuck');
    await redis.control.createProject({ id, goal: '- a' });
    const queued = await world.cli(['status', id]);
    expect(queued.stdout).toMatch(
      /^problem\s+queued but no session job is waiting and no worker holds it$/mu,
    );
    expect(queued.stdout).toMatch(new RegExp(`^fix\\s+baton resume ${id}$`, 'mu'));
    await redis.control.enqueue(id);
    const waiting = await world.cli(['status', id]);
    expect(waiting.stdout).not.toMatch(/^problem/mu);

    await redis.repository.transition(id, 'failed', { reason: '3 sessions failed in a row' });
    const failed = await world.cli(['status', id]);
    expect(failed.stdout).toMatch(/^status\s+failed \(3 sessions failed in a row\)/mu);
    expect(failed.stdout).toMatch(new RegExp(`^fix\\s+baton resume ${id}$`, 'mu'));
  });

  it('an empty Redis without the deployment marker is reported as new or wiped, never as just empty', async () => {
    const listed = await world.cli(['status']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('no projects');
    expect(listed.stdout).toContain('no Baton deployment marker');
    expect(listed.stdout).toContain('refs/heads/baton/*');
    const missing = await world.cli(['status', 'gone-1']);
    expect(missing.code).toBe(7);
    expect(missing.stderr).toContain('Redis lost its data');
  });
});

describe('a half-written project (fragments written after Redis lost its data) is never a ghost', () => {
  it('`baton status ID` names the fragments and the fix; `baton enqueue` creates it again in their place', async () => {
    const { redis } = world;
    const id = redis.projectId('ghost');
    // What a session that kept writing into an emptied Redis left before fencing: counters and
    // a status, no id, no configuration, no index entry.
    const client = redis.repository.redis;
    await client.hset(redis.control.keys.project(id), 'status', 'running', 'sessions', '3');

    const shown = await world.cli(['status', id]);
    expect(shown.code).not.toBe(0);
    expect(shown.stderr.trim().split('\n')).toHaveLength(1);
    expect(shown.stderr).toContain(`only fragments of its record are left (sessions, status)`);
    expect(shown.stderr).toContain(`baton enqueue --project ${id}`);

    const created = await world.cli(['enqueue', '--project', id, '--goal', 'Build\n- a']);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const json = await world.cli(['status', id, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, status: 'queued', sessions: 0 });
    const listed = await world.cli(['status', '--json']);
    expect((JSON.parse(listed.stdout) as { id: string }[]).map((row) => row.id)).toContain(id);

    // A real project is still refused.
    const again = await world.cli(['enqueue', '--project', id, '--goal', 'x']);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/already exists/u);
  });
});

describe('`baton status` without an id lists the projects nothing runs and what is left of lost ones', () => {
  it('a stuck project, a fragment and a job of a project Redis lost each get a problem and a fix line', async () => {
    const { redis } = world;
    const stuck = redis.projectId('stuck');
    const healthy = redis.projectId('fine');
    const fragment = redis.projectId('ghost');
    const orphan = redis.projectId('lost');
    const lone = redis.projectId('alone');
    await redis.control.createProject({ id: stuck, goal: '- a' });
    await redis.control.createProject({ id: healthy, goal: '- a' });
    await redis.control.enqueue(healthy);
    // What Redis losing its data mid-run can leave: a record's fragments, and session jobs of
    // projects whose records are gone (each job written again by a worker that had it in hand).
    const client = redis.repository.redis;
    await client.hset(redis.control.keys.project(fragment), 'status', 'running', 'sessions', '3');
    // A fragment no session job names: found by the bounded scan of the project hashes.
    await client.hset(redis.control.keys.project(lone), 'activeSession', '{}', 'sessions', '1');
    const queue = createSessionQueue({ connection: client, keys: redis.control.keys });
    try {
      for (const id of [fragment, orphan]) {
        await queue.add(
          'chain',
          // The lost project's creation time: a job never names a project created since.
          { projectId: id, sessionNumber: 4, reason: 'chain', generation: Date.now() - 3_600_000 },
          { jobId: sessionJobId(id, 4), delay: 3_600_000 },
        );
      }
    } finally {
      await queue.close();
    }

    const listed = await world.cli(['status']);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    const problemOf = (id: string) => {
      const at = lines.findIndex((line) => line.startsWith(`problem   ${id}: `));
      return at === -1 ? null : { problem: lines[at], fix: lines[at + 1] };
    };
    expect(problemOf(stuck)).toEqual({
      problem: `problem   ${stuck}: queued but no session job is waiting and no worker holds it`,
      fix: `fix       baton resume ${stuck}`,
    });
    expect(problemOf(fragment)?.problem).toContain(
      'only fragments of its record are left (sessions, status)',
    );
    expect(problemOf(fragment)?.fix).toMatch(
      new RegExp(`^fix\\s+baton enqueue --project ${fragment} `, 'u'),
    );
    expect(problemOf(orphan)?.problem).toContain(`which Redis no longer has`);
    expect(problemOf(orphan)?.problem).toContain(`baton/${orphan}`);
    expect(problemOf(orphan)?.fix).toMatch(
      new RegExp(`^fix\\s+baton enqueue --project ${orphan} `, 'u'),
    );
    expect(problemOf(lone)?.problem).toContain(
      'only fragments of its record are left (activeSession, sessions)',
    );
    expect(problemOf(lone)?.fix).toMatch(
      new RegExp(`^fix\\s+baton enqueue --project ${lone} `, 'u'),
    );
    expect(listed.stdout).not.toMatch(/^note/mu);
    expect(problemOf(healthy)).toBeNull();
    // The rows above are the projects Redis has, as `baton projects` lists them.
    const json = await world.cli(['status', '--json']);
    const ids = (JSON.parse(json.stdout) as { id: string }[]).map((row) => row.id);
    expect(ids).toEqual(expect.arrayContaining([stuck, healthy]));
    expect(ids).not.toContain(fragment);

    // The fixes named: the stuck project is queued again, the fragment becomes a project.
    expect((await world.cli(['resume', stuck])).code).toBe(0);
    const created = await world.cli(['enqueue', '--project', fragment, '--goal', 'Build\n- a']);
    expect(created.code).toBe(0);
    const after = (await world.cli(['status'])).stdout;
    expect(after).not.toContain(`problem   ${stuck}:`);
    expect(after).not.toContain(`problem   ${fragment}:`);
    expect(after).toContain(`problem   ${orphan}:`);
  });
});
