import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileProjectLog, PROJECT_TRANSITIONS } from '../src/index.js';
import { newProjectRecord } from './support/project-log-conformance.js';

// `baton run` changes its project's record while another process changes it too (`baton pause
// --local`). Each process has its own FileProjectLog, whose in-process queue does not see the
// other's writes: two logs on one home stand for the two processes here.

describe('FileProjectLog: changes from two processes to one record are all kept', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-two-logs-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('counts every change made at once through two logs, and leaves no lock behind', async () => {
    const running = createFileProjectLog({ home });
    const other = createFileProjectLog({ home });
    await running.create(newProjectRecord('both'));
    const start = (log: typeof running, n: number) =>
      log.markSessionStart(
        'both',
        { sessionId: `s${n}`, sessionNumber: n, jobId: `j${n}`, workerId: 'w', startedAt: n },
        true,
      );
    // Each call reads, changes and writes the record: without a lock across the two logs, one
    // log writes over the other's change and interruptions come out below 60.
    await Promise.all(
      Array.from({ length: 30 }, (_, index) => [start(running, index), start(other, index)]).flat(),
    );
    expect((await running.require('both')).counters.interruptions).toBe(60);
    expect(await readdir(path.join(home, 'projects', 'both'))).not.toContain('project.json.lock');
  });

  it('an operator pause through one log is never undone by the running log writing its record', async () => {
    const running = createFileProjectLog({ home });
    const operator = createFileProjectLog({ home });
    await running.create(newProjectRecord('pause'));
    await running.transition('pause', 'running');
    const checkpoints = Array.from({ length: 40 }, (_, index) =>
      running.setLastCheckpoint('pause', `c${index}`),
    );
    const paused = operator.transition('pause', PROJECT_TRANSITIONS.pause.to, {
      from: PROJECT_TRANSITIONS.pause.from,
      reason: 'paused by operator',
    });
    await Promise.all([...checkpoints, paused]);
    expect(await paused).toMatchObject({ ok: true, from: 'running' });
    expect(await running.require('pause')).toMatchObject({
      status: 'paused',
      lastCheckpoint: 'c39',
    });
  });
});
