import { createSessionQueue, sessionJobId, type SessionJobData } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { capturedLogger } from './support/captured-logger.js';
import { startWorldWorker } from './support/in-process-worker.js';
import { randomProjectId } from './support/redis.js';
import { createScriptedRunner } from './support/scripted-runner.js';
import { adminOf, controlWorld } from './support/sim-world.js';

describe('a worker refuses a job of an earlier project of the same id, naming that reason', () => {
  const world = controlWorld();

  it('on a paused project: the earlier project’s job is refused as stale, the project’s own job is skipped as paused', async () => {
    const { control, projects } = world;
    const sessionsRun: number[] = [];
    const log = capturedLogger();
    await startWorldWorker(world, {
      logger: log.logger,
      runSession: createScriptedRunner({
        onStart: ({ sessionNumber }) => void sessionsRun.push(sessionNumber),
      }),
    });
    const id = randomProjectId('stale');
    projects.push(id);
    const project = await control.createProject({ id, goal: 'Build it\n- one' });
    await control.pause(id);

    // Two reasons hold for the first job (its project is paused, and it is not its project): the
    // refusal must name the one that makes it a refusal. The second job is the project's own.
    const earlier = project.createdAt - 1;
    const queue = createSessionQueue({ connection: adminOf(world), keys: control.keys });
    world.closeAfter(queue);
    const jobs: [number, number][] = [
      [1, earlier],
      [2, project.createdAt],
    ];
    for (const [sessionNumber, generation] of jobs) {
      await queue.add(
        'session',
        { projectId: id, sessionNumber, reason: 'enqueue', generation } satisfies SessionJobData,
        { jobId: sessionJobId(id, sessionNumber) },
      );
    }
    const returned = await waitFor('both jobs finished', async () => {
      const finished = await Promise.all(
        jobs.map(async ([sessionNumber]) => {
          // One read of the job's hash: its end and its result are written together.
          const job = await queue.getJob(sessionJobId(id, sessionNumber));
          return job?.finishedOn === undefined ? undefined : (job.failedReason ?? job.returnvalue);
        }),
      );
      return finished.every((value) => value !== undefined) ? finished : null;
    });

    const stale =
      `queued for an earlier project ${id} (created ${new Date(earlier).toISOString()}), ` +
      `not the one created ${new Date(project.createdAt).toISOString()}`;
    expect(returned[0]).toMatchObject({ ran: false, skipped: expect.stringContaining(stale) });
    expect(returned[1]).toEqual({ ran: false, skipped: 'project is paused' });
    const about = (message: string) =>
      log.lines
        .filter((line) => line.msg === message)
        .map(({ jobId, refused, skipped }) => ({ jobId, why: refused ?? skipped }));
    expect(about('session job refused: not a job of this project')).toEqual([
      { jobId: sessionJobId(id, 1), why: expect.stringContaining(stale) },
    ]);
    expect(about('session job skipped')).toEqual([
      { jobId: sessionJobId(id, 2), why: 'project is paused' },
    ]);

    // Neither job touched the project.
    expect(sessionsRun).toEqual([]);
    const after = await control.getProject(id);
    expect(after?.status).toBe('paused');
    expect(after?.counters.sessions).toBe(0);
    const events = await control.readEvents(id, { count: 1000 });
    expect(events.filter(({ event }) => event.type === 'session-claimed')).toEqual([]);
  });
});
