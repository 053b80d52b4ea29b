import { startModelSim, type ModelSim } from '@baton/model-sim';
import { createFileProjectLog } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL, cliEnv, runCli, startCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// `baton cancel --local` applies the control API's cancel rule (`operatorCancel`) to a `baton
// run` project; a `baton run` of it in another process notices within 250 ms, as it notices
// `baton pause --local`, and exits 130 (the exit-code table's code for a cancelled project).
const world = redisCliWorld();

/** A simulator that holds the first request continuing a session's work, and its environment. */
async function heldSession(): Promise<{ sim: ModelSim; env: Record<string, string> }> {
  const sim = world.closeAfter(await startModelSim({ faults: { stallNextWork: 1 } }));
  return {
    sim,
    env: {
      BATON_MODEL: 'claude-sonnet-4-6',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_CHAIN_DELAY_MS: '0',
    },
  };
}

describe('baton cancel --local', () => {
  it('cancels a `baton run` project between runs; cancelling again is ok; baton run continues it', async () => {
    const env = cliEnv(world.home);
    const first = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'lc', '--sessions', '1'],
      { cwd: world.dir, env },
    );
    expect(first.code, first.stderr).toBe(3);
    const cancelled = await runCli(['cancel', 'lc', '--local', '--json'], { cwd: world.dir, env });
    expect(cancelled.stderr).toBe('');
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({
      id: 'lc',
      status: 'cancelled',
      statusReason: 'cancelled by user',
      removedJobId: null,
    });
    const log = createFileProjectLog({ home: world.home });
    expect((await log.transitions('lc')).at(-1)).toMatchObject({
      from: 'queued',
      to: 'cancelled',
      reason: 'cancelled by user',
    });
    const again = await runCli(['cancel', 'lc', '--local'], { cwd: world.dir, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('cancelled project lc; continue it with: baton run --project lc\n');
    const continued = await runCli(['run', '--project', 'lc', '--sessions', '1'], {
      cwd: world.dir,
      env,
    });
    expect(continued.code, continued.stderr).toBe(3);
    expect((await log.require('lc')).counters.sessions).toBe(2);
  });

  it('refuses an unknown project (exit 7) and a completed one (exit 2) in the words of the Redis cancel', async () => {
    const env = cliEnv(world.home);
    const unknown = await runCli(['cancel', 'ghost', '--local'], { cwd: world.dir, env });
    expect(unknown.code).toBe(7);
    expect(oneLine(unknown.stderr)).toContain('no project ghost');
    const done = await runCli(['run', '--goal-file', EXAMPLE_GOAL, '--project', 'cdone'], {
      cwd: world.dir,
      env,
    });
    expect(done.code, done.stderr).toBe(0);
    const local = await runCli(['cancel', 'cdone', '--local'], { cwd: world.dir, env });
    expect(local.code).toBe(2);
    expect(oneLine(local.stderr)).toBe('baton: project cdone is already completed.');

    const id = world.redis.projectId('cdone');
    await world.redis.control.createProject({ id, goal: '- a' });
    await world.redis.repository.transition(id, 'completed');
    const remote = await world.cli(['cancel', id]);
    expect(remote.code).toBe(2);
    expect(oneLine(remote.stderr)).toBe(`baton: project ${id} is already completed.`);
  });

  it('a `baton run` in another process aborts its session, exits 130, and a worker stops alike on `baton cancel`', async () => {
    const localHeld = await heldSession();
    const run = startCli(['run', '--goal-file', EXAMPLE_GOAL, '--project', 'lrun'], {
      cwd: world.dir,
      env: cliEnv(world.home, localHeld.env),
    });
    world.closeAfter({
      close: async () => {
        run.kill('SIGKILL');
        await run.done;
      },
    });
    await localHeld.sim.waitForStalled(1, 90_000);
    const cancelled = await runCli(['cancel', 'lrun', '--local'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(cancelled.stderr).toBe('');
    expect(cancelled.code).toBe(0);
    // Nothing is released: only the cancel can end the held session.
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(130);
    expect(ended.stdout).toContain('Cancelled: cancelled by user.');
    const log = createFileProjectLog({ home: world.home });
    const local = await log.require('lrun');
    const localSessions = await log.listSessions('lrun');

    // The same through a worker and `baton cancel`.
    const remoteHeld = await heldSession();
    world.startWorker('worker-home', remoteHeld.env);
    const id = world.redis.projectId('wrun');
    const enqueued = await world.cli(['enqueue', '--project', id, '--goal-file', EXAMPLE_GOAL]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await remoteHeld.sim.waitForStalled(1, 90_000);
    const cancelledRemote = await world.cli(['cancel', id]);
    expect(cancelledRemote.code, cancelledRemote.stderr).toBe(0);
    const remote = await waitFor(
      `${id} records its cancelled session`,
      async () => {
        const project = await world.redis.control.getProject(id);
        return project !== null && project.activeSession === null && project.counters.sessions > 0
          ? project
          : false;
      },
      120_000,
    );
    const remoteSessions = await world.redis.control.listSessions(id);
    for (const [project, sessions] of [
      [local, localSessions],
      [remote, remoteSessions],
    ] as const) {
      expect(project.status).toBe('cancelled');
      expect(project.statusReason).toBe('cancelled by user');
      expect(project.activeSession).toBeNull();
      expect(project.counters.sessions).toBe(1);
      expect(sessions).toHaveLength(1);
    }
    expect(localSessions[0]?.outcome).toBe(remoteSessions[0]?.outcome);
  }, 300_000);
});
