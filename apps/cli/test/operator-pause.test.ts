import { createFileProjectLog } from '@baton/projects';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL, cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton pause', () => {
  it('pauses a queued project, removes its queued session, and resume queues it again', async () => {
    const { redis } = world;
    const id = redis.projectId('px');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.control.enqueue(id);
    const result = await world.cli(['pause', id, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      id,
      status: 'paused',
      changed: true,
      removedJobId: `${id}@1`,
    });
    expect((await redis.control.queueCounts()).waiting).toBe(0);
    expect((await redis.control.listTransitions(id)).at(-1)).toMatchObject({
      from: 'queued',
      to: 'paused',
      reason: 'paused by operator',
    });
    const again = await world.cli(['pause', id]);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      `project ${id} is already paused; continue it with: baton resume ${id}\n`,
    );
    const resumed = await world.cli(['resume', id]);
    expect(resumed.code).toBe(0);
    expect((await redis.control.queueCounts()).waiting).toBe(1);
  });

  it('refuses a finished project (exit 2) and an unknown one (exit 7) with one line each', async () => {
    const { redis } = world;
    const id = redis.projectId('pdone');
    await redis.control.createProject({ id, goal: '- a' });
    await redis.repository.transition(id, 'completed');
    const completed = await world.cli(['pause', id]);
    expect(completed.code).toBe(2);
    expect(oneLine(completed.stderr)).toContain(`project ${id} is completed`);
    const unknown = await world.cli(['pause', 'ghost-1']);
    expect(unknown.code).toBe(7);
    oneLine(unknown.stderr);
  });
});

describe('baton pause --local', () => {
  it('pauses a `baton run` project between runs; resume --local names baton run, which continues it', async () => {
    const env = cliEnv(world.home);
    const first = await runCli(
      ['run', '--goal-file', EXAMPLE_GOAL, '--project', 'lp', '--sessions', '1'],
      { cwd: world.dir, env },
    );
    expect(first.code, first.stderr).toBe(3);
    const paused = await runCli(['pause', 'lp', '--local', '--json'], { cwd: world.dir, env });
    expect(paused.stderr).toBe('');
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({
      id: 'lp',
      status: 'paused',
      changed: true,
      removedJobId: null,
      runningSessionId: null,
    });
    const log = createFileProjectLog({ home: world.home });
    expect((await log.transitions('lp')).at(-1)).toMatchObject({
      from: 'queued',
      to: 'paused',
      reason: 'paused by operator',
    });
    const again = await runCli(['pause', 'lp', '--local'], { cwd: world.dir, env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(
      'project lp is already paused; continue it with: baton run --project lp\n',
    );
    const resume = await runCli(['resume', 'lp', '--local'], { cwd: world.dir, env });
    expect(resume.code).toBe(2);
    expect(oneLine(resume.stderr)).toBe(
      'baton: a `baton run` project has no queue to resume into: `baton run --project lp` resumes it and runs its sessions.',
    );
    expect((await log.require('lp')).status).toBe('paused');
    const continued = await runCli(['run', '--project', 'lp', '--sessions', '1'], {
      cwd: world.dir,
      env,
    });
    expect(continued.code, continued.stderr).toBe(3);
    expect((await log.require('lp')).counters.sessions).toBe(2);
  });

  it('refuses an unknown local project (exit 7) and a finished one (exit 2), one line each', async () => {
    const env = cliEnv(world.home);
    const unknown = await runCli(['pause', 'ghost', '--local'], { cwd: world.dir, env });
    expect(unknown.code).toBe(7);
    expect(oneLine(unknown.stderr)).toContain('no project ghost');
    const resumeUnknown = await runCli(['resume', 'ghost', '--local'], { cwd: world.dir, env });
    expect(resumeUnknown.code).toBe(7);
    const done = await runCli(['run', '--goal-file', EXAMPLE_GOAL, '--project', 'ldone'], {
      cwd: world.dir,
      env,
    });
    expect(done.code, done.stderr).toBe(0);
    const completed = await runCli(['pause', 'ldone', '--local'], { cwd: world.dir, env });
    expect(completed.code).toBe(2);
    expect(oneLine(completed.stderr)).toContain(
      'baton: project ldone is completed; only a queued or running project can be paused',
    );
  });
});
