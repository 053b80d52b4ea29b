import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { scriptedCommands, type SimScript } from '@baton/model-sim';
import { createHuskyRepo, git, hostileHookScript, plantCanary } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

// Whole projects through a worker process and git: minutes on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

const GOAL = 'Greeter\n- say hello\n- say goodbye';

/**
 * Through a worker process: a husky hook running a script the model rewrote stays in the
 * sandbox, and the project's own workspace limit (`sandbox.limits.workspaceFiles`) is enforced.
 */
describe('hooks and workspace limits, through a worker', () => {
  let script: SimScript | undefined;
  const world = useProcessWorld('baton-worker-hooks-', {
    script: (request) => script?.(request),
  });
  let root: string;
  beforeEach(async () => {
    script = undefined;
    root = await mkdtemp(path.join(os.tmpdir(), 'baton-worker-hooks-repo-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('a husky hook running a script the model rewrote leaves the host canary untouched and unread', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const repo = await createHuskyRepo(root);
    await mkdir(path.join(root, 'host'));
    const canary = await plantCanary(path.join(root, 'host'));
    expect(await canary.selfCheck()).toBe(true);
    script = scriptedCommands({ commands: [hostileHookScript(canary.path)] });
    workers.push(
      await spawnWorker(
        simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_CHECKPOINT_INTERVAL_MS: '0' }),
      ),
    );
    const id = randomProjectId('husky');
    projects.push(id);
    await control.createProject({ id, goal: GOAL, repo });
    await control.enqueue(id);
    const done = await waitForCompleted(control, id, 200_000);
    expect(done.counters.featuresPassing).toBe(2);
    const report = git(repo, 'show', `baton/${id}:hook-report.txt`);
    expect(report).toContain('canary unreachable');
    expect(report).toContain('canary unwritable');
    expect(report).toMatch(/^home=\S+ key=\[\] redis=\[\]$/m);
    expect(report).not.toContain('canary-content-outside');
    expect(report).not.toContain('test-key');
    expect(await canary.touched()).toEqual({ read: false, written: false });
  });

  it("the project's workspaceFiles limit: the model is told in one line, then the project completes", async () => {
    const { prefix, control, sim, workers, projects } = world;
    const results: { command: string; output: string; isError: boolean }[] = [];
    script = scriptedCommands({
      commands: ['mkdir junk && touch junk/f{1..300}', 'rm -rf junk'],
      onResult: (result) => results.push(result),
    });
    workers.push(await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url })));
    const id = randomProjectId('files');
    projects.push(id);
    await control.createProject({
      id,
      goal: GOAL,
      sandbox: { limits: { workspaceFiles: 200 } },
    });
    await control.enqueue(id);
    const done = await waitForCompleted(control, id, 200_000);
    expect(done.counters.featuresPassing).toBe(2);
    const filled = results.filter((result) => result.command.startsWith('mkdir'));
    expect(filled.length).toBe(done.counters.sessions);
    for (const result of filled) {
      expect(result.isError).toBe(true);
      expect(result.output).toMatch(
        /^\(no output\)\nThe workspace is over its file limit: 3\d\d files and directories of 200 \(sandbox limit workspaceFiles\); delete files/,
      );
    }
    for (const result of results.filter((entry) => entry.command.startsWith('rm'))) {
      expect(result.isError).toBe(false);
    }
    const starts = (await control.readEvents(id, { count: 10_000 }))
      .map((entry) => entry.event)
      .filter((event) => event.type === 'session-start');
    expect(
      starts.every(
        (event) =>
          (event.sandbox as unknown as { policy: { limits: { workspaceFiles: number } } }).policy
            .limits.workspaceFiles === 200,
      ),
    ).toBe(true);
  });
});
