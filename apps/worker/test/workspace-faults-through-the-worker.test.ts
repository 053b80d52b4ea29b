import { existsSync, renameSync } from 'node:fs';
import { chmod, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { checkoutFingerprint, createUserRepo, git, waitFor } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SimScriptRequest } from '@baton/model-sim';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

// Each test runs whole projects through worker processes and git: minutes on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

const GOAL = 'Greeter\n- say hello\n- say goodbye';

async function writeHook(repo: string, body: string): Promise<void> {
  const file = path.join(repo, '.git', 'hooks', 'pre-commit');
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
}

describe('workspace faults, through a worker process', () => {
  /** The newest message of every request (what the agent was just told), as JSON. */
  const newestMessages: string[] = [];
  let onRequest: (request: SimScriptRequest) => void = () => undefined;
  const world = useProcessWorld('baton-ws-faults-', {
    script: (request) => {
      newestMessages.push(JSON.stringify(request.params.messages.at(-1) ?? null));
      onRequest(request);
      return undefined;
    },
  });
  let root: string;
  beforeEach(async () => {
    newestMessages.length = 0;
    onRequest = () => undefined;
    root = await mkdtemp(path.join(os.tmpdir(), 'baton-ws-faults-repo-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('a remote that becomes unreachable mid-session: the work continues, the project is paused (not failed) with the reason, and a resume pushes everything', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const repo = await createUserRepo(root);
    const before = await checkoutFingerprint(repo);
    const id = randomProjectId('unreachable');
    projects.push(id);
    await control.createProject({ id, goal: GOAL, repo });
    // The remote goes away at the first model request of the second session: after its workspace
    // was prepared from the remote, before it writes anything.
    const away = `${repo}-away`;
    let firstRequests = 0;
    let initCheckpoint = '';
    onRequest = (request) => {
      if (request.params.messages.length !== 1 || ++firstRequests !== 2) return;
      initCheckpoint = git(repo, 'rev-parse', `baton/${id}`);
      renameSync(repo, away);
    };
    const env = simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_CHECKPOINT_INTERVAL_MS: '0' });
    workers.push(await spawnWorker({ ...env, BATON_HOME: path.join(root, 'home') }));
    await control.enqueue(id);
    const paused = await waitFor(
      'paused',
      async () => {
        const project = await control.getProject(id);
        if (project?.status === 'failed') throw new Error(`failed: ${project.statusReason}`);
        return project?.status === 'paused' ? project : null;
      },
      90_000,
    );
    expect(paused.statusReason).toMatch(
      /^checkpoint_failed: checkpoint [0-9a-f]{12} was not pushed: /,
    );
    expect(paused.counters.sessions).toBe(2);
    // The session did its work: its feature passes, its commits are in the worker's clone only.
    const session = (await control.listSessions(id)).at(-1);
    expect(session?.flippedFeatures.length).toBeGreaterThan(0);
    expect(session?.checkpoint).toMatchObject({ pushed: false });
    expect(session?.checkpoint?.head).toMatch(/^[0-9a-f]{40}$/);
    expect(session?.checkpoint?.head).not.toBe(initCheckpoint);
    // The last acknowledged checkpoint is still the last pushed one.
    expect(paused.lastCheckpoint).toBe(initCheckpoint);

    // The remote is back: the next session first pushes what the clone kept, then completes.
    await rename(away, repo);
    await control.resume(id);
    const done = await waitForCompleted(control, id, 90_000);
    expect(done.counters.featuresPassing).toBe(2);
    const head = git(repo, 'rev-parse', `baton/${id}`);
    expect(done.lastCheckpoint).toBe(head);
    expect(git(repo, 'merge-base', '--is-ancestor', session?.checkpoint?.head ?? '', head)).toBe(
      '',
    );
    const files = git(repo, 'ls-tree', '-r', '--name-only', head).split('\n');
    expect(files).toEqual(expect.arrayContaining(['features/f1.sh', 'features/f2.sh']));
    expect(await checkoutFingerprint(repo)).toEqual(before);
  });

  it('hooks that refuse: work saved and marked, the model told, the summary says so; --skip-hooks never runs them', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const repo = await createUserRepo(root);
    const ran = path.join(root, 'hook-ran.log');
    await writeHook(repo, `echo ran >> ${ran}\necho "lint: trailing whitespace" >&2\nexit 1`);
    const env = simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_CHECKPOINT_INTERVAL_MS: '0' });
    workers.push(await spawnWorker({ ...env, BATON_HOME: path.join(root, 'home') }));

    const checked = randomProjectId('hooks');
    projects.push(checked);
    await control.createProject({ id: checked, goal: GOAL, repo });
    await control.enqueue(checked);
    await waitForCompleted(control, checked, 90_000);
    const sessions = await control.listSessions(checked);
    expect(sessions.map((entry) => entry.checkpoint?.hooks)).toContain('refused');
    expect(git(repo, 'log', '--format=%B', `baton/${checked}`)).toContain(
      'Baton-Hooks: refused (lint: trailing whitespace)',
    );
    expect(
      newestMessages.some(
        (message) =>
          message.includes('refused by the repository') &&
          message.includes('lint: trailing whitespace'),
      ),
    ).toBe(true);
    // The hook ran (its refusal is in the trailer) inside the sandbox: the host file it tried to
    // append to, outside the workspace, was never written.
    expect(existsSync(ran)).toBe(false);

    const skipping = randomProjectId('nohooks');
    projects.push(skipping);
    await control.createProject({ id: skipping, goal: GOAL, repo, skipHooks: true });
    await control.enqueue(skipping);
    await waitForCompleted(control, skipping, 90_000);
    const skipped = await control.listSessions(skipping);
    expect(new Set(skipped.map((entry) => entry.checkpoint?.hooks))).toEqual(new Set(['skipped']));
    // The hook never ran for the second project: no refusal on its branch.
    expect(git(repo, 'log', '--format=%B', `baton/${skipping}`)).not.toContain(
      'Baton-Hooks: refused',
    );
    expect(git(repo, 'show', `baton/${skipping}:features/f2.sh`)).toContain('F2 ok');
  });
});
