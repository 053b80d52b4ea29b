import { mkdtemp, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkoutFingerprint, createUserRepo, git } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parkAfterFirstFlip } from './support/park.js';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

// Each test runs whole projects through worker processes and git: minutes on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

const GOAL = 'Greeter\n- say hello\n- say goodbye\n- say thanks';

describe('a project on a repository, worked on by workers on two machines', () => {
  const park = parkAfterFirstFlip();
  const world = useProcessWorld('baton-machines-', { script: park.script });
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'baton-machines-repo-'));
  });
  afterEach(async () => {
    park.release();
    await rm(root, { recursive: true, force: true });
  });

  it('the first is SIGKILLed after a pushed mid-session checkpoint; the second (another BATON_HOME) continues from it and completes on baton/<id>', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const repo = await createUserRepo(root);
    const before = await checkoutFingerprint(repo);
    const id = randomProjectId('machines');
    projects.push(id);
    const created = await control.createProject({ id, goal: GOAL, repo });
    expect(created).toMatchObject({
      repo,
      base: 'feature',
      baseCommit: git(repo, 'rev-parse', 'feature'),
      branch: `baton/${id}`,
      lastCheckpoint: null,
      skipHooks: false,
    });

    const homeA = path.join(root, 'machine-a');
    const homeB = path.join(root, 'machine-b');
    const env = simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_CHECKPOINT_INTERVAL_MS: '0' });
    const first = await spawnWorker({ ...env, BATON_HOME: homeA, BATON_WORKER_ID: 'first' });
    workers.push(first);
    await control.enqueue(id);
    await park.parked;

    // Mid-session: the checkpoint of F1's files is on the remote and recorded, the session runs.
    const running = await control.getProject(id);
    expect(running?.status).toBe('running');
    expect(running?.activeSession?.workerId).toBe('first');
    const checkpoint = running?.lastCheckpoint ?? '';
    expect(checkpoint).toBe(git(repo, 'rev-parse', `baton/${id}`));
    expect(git(repo, 'show', `baton/${id}:features/f1.sh`)).toContain('F1 ok');
    const events = await control.readEvents(id, { count: 10_000 });
    expect(
      events.some(
        (entry) =>
          entry.event.type === 'checkpoint' &&
          entry.event.head === checkpoint &&
          entry.event.pushed === true,
      ),
    ).toBe(true);

    const second = await spawnWorker({ ...env, BATON_HOME: homeB, BATON_WORKER_ID: 'second' });
    workers.push(second);
    first.kill('SIGKILL');
    await first.exited;
    park.release();
    // Nothing of machine A is reachable from B: it needs only Redis and the repository.
    await rename(homeA, `${homeA}-gone`);

    const done = await waitForCompleted(control, id, 90_000);
    expect(done.counters.featuresPassing).toBe(3);
    expect(done.counters.interruptions).toBe(1);

    const after = await control.readEvents(id, { count: 10_000 });
    const prepared = after.find(
      (entry) => entry.event.type === 'workspace-prepared' && entry.event.workerId === 'second',
    );
    expect(prepared?.event).toMatchObject({ head: checkpoint, branch: `baton/${id}` });
    // The session that resumed on B was told where the branch was last saved.
    expect(park.firstPrompts.join('\n')).toContain(
      `Last checkpoint of the workspace: commit ${checkpoint.slice(0, 12)}.`,
    );
    const store = await control.memoryStore(id);
    const progress = (await store.read('progress.md')) ?? '';
    expect(progress).toContain(
      `The workspace starts from checkpoint ${checkpoint.slice(0, 12)} of baton/${id}`,
    );

    // The branch continues the checkpoint and holds every feature's files; the checkout is as it was.
    const head = git(repo, 'rev-parse', `baton/${id}`);
    expect(done.lastCheckpoint).toBe(head);
    expect(git(repo, 'merge-base', '--is-ancestor', checkpoint, head)).toBe('');
    expect(git(repo, 'merge-base', '--is-ancestor', 'feature', head)).toBe('');
    const files = git(repo, 'ls-tree', '-r', '--name-only', head).split('\n');
    expect(files).toEqual(
      expect.arrayContaining(['features/f1.sh', 'features/f2.sh', 'features/f3.sh', 'init.sh']),
    );
    expect(files).not.toContain('notes.txt');
    expect(await checkoutFingerprint(repo)).toEqual(before);
    expect((await stat(path.join(homeB, 'workspaces', id, 'features', 'f3.sh'))).isFile()).toBe(
      true,
    );
    const sessions = await control.listSessions(id);
    const last = sessions.at(-1);
    expect(last?.workerId).toBe('second');
    expect(last?.commits?.length ?? 0).toBeGreaterThan(0);
    expect(last?.checkpoint).toMatchObject({ head, pushed: true });
  });
});
