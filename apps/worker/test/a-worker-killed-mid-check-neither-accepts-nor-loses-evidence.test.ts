import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { readFeatures } from '@baton/session';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/** Command lines of the host's processes that contain `needle` (read from /proc). */
function processesWith(needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (command.includes(needle)) found.push(`${entry}: ${command.trim()}`);
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** The path of `name` anywhere under `root`, or undefined. */
function findFile(root: string, name: string): string | undefined {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.name === name) return full;
    if (entry.isDirectory() && entry.name !== '.git') {
      const inside = findFile(full, name);
      if (inside !== undefined) return inside;
    }
  }
  return undefined;
}

describe('a worker killed with SIGKILL while a feature check runs', () => {
  const world = useProcessWorld('baton-kill-mid-check-');

  it('leaves no check process behind; the flip waits for evidence, which the resumed session on another worker records', async () => {
    const { prefix, control, sim, workers, projects, home } = world;
    // A sleep no other process on the machine runs: the check's process, found by its arguments.
    const sleep = `7331.${randomHex(3).replace(/[a-f]/g, '1')}`;
    // The project's default check (F2 has none of its own) hangs the first time it runs, after
    // leaving a mark in the workspace; after that it checks the feature for real.
    const check = `if [ ! -e .check-hung ]; then : > .check-hung; exec sleep ${sleep}; fi; sh "features/$(echo "$BATON_FEATURE_ID" | tr A-Z a-z).sh" | grep "$BATON_FEATURE_ID ok"`;
    // Both workers share one BATON_HOME (a project without --repo keeps its code there).
    const env = simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_HOME: home });
    const first = await spawnWorker({ ...env, BATON_WORKER_ID: 'first' });
    workers.push(first);
    const id = randomProjectId('killcheck');
    projects.push(id);
    await control.createProject({
      id,
      goal: 'Todo app\n- Add a todo\n- List todos [sim:no-check]\n- Mark done',
      verification: { check },
    });
    await control.enqueue(id);

    const mark = await waitFor("F2's check to start", () => findFile(home, '.check-hung'), 120_000);
    const running = await waitFor('the check process', () => {
      const found = processesWith(`sleep ${sleep}`);
      return found.length > 0 ? found : undefined;
    });
    expect(running.length).toBeGreaterThan(0);
    const eventsBeforeKill = (await control.readEvents(id, { count: 10_000 })).map(
      (entry) => entry.event,
    );
    const killedSession = eventsBeforeKill.findLast((event) => event.type === 'session-start');
    expect(killedSession).toBeDefined();

    first.kill('SIGKILL');
    await first.exited;
    // The sandbox dies with its parent: nothing of the check outlives the worker.
    await waitFor(
      'the check process to be gone',
      () => processesWith(`sleep ${sleep}`).length === 0 || undefined,
      5_000,
    );

    // The flip was not accepted without evidence: F2 still fails in memory, no check result
    // was recorded for it, and F1's evidence from the session before is kept.
    const store = await control.memoryStore(id);
    try {
      const features = await readFeatures(store);
      expect(features?.map((feature) => [feature.id, feature.passes])).toEqual([
        ['F1', true],
        ['F2', false],
        ['F3', false],
      ]);
    } finally {
      await store.close();
    }
    const afterKill = await control.readChecks(id);
    expect(afterKill.F2).toBeUndefined();
    expect(afterKill.F1).toMatchObject({ status: 'verified', evidence: { passed: true } });
    const f1Evidence = afterKill.F1?.evidence;
    expect(
      eventsBeforeKill.filter(
        (event) =>
          (event.type === 'check-passed' || event.type === 'check-failed') &&
          event.evidence.featureId === 'F2',
      ),
    ).toEqual([]);
    expect(path.dirname(mark)).toContain(home);

    // Another worker resumes the interrupted session and completes the project on evidence.
    workers.push(await spawnWorker({ ...env, BATON_WORKER_ID: 'second' }));
    const done = await waitForCompleted(control, id, 180_000);
    expect(done.counters).toMatchObject({
      featuresPassing: 3,
      featuresVerified: 3,
      featuresClaimed: 0,
      interruptions: 1,
    });
    const checks = await control.readChecks(id);
    for (const feature of ['F1', 'F2', 'F3']) {
      expect(checks[feature], feature).toMatchObject({
        status: 'verified',
        evidence: { passed: true, commit: done.lastCheckpoint },
      });
    }
    expect(checks.F2?.evidence?.command).toBe(check);
    expect(checks.F2?.evidence?.outputTail).toBe('F2 ok: List todos [sim:no-check]');
    const events = (await control.readEvents(id, { count: 10_000 })).map((entry) => entry.event);
    const secondSessions = new Set(
      events.flatMap((event) =>
        event.type === 'session-claimed' && event.workerId === 'second' ? [event.sessionId] : [],
      ),
    );
    const f2Passed = events.filter(
      (event) => event.type === 'check-passed' && event.evidence.featureId === 'F2',
    );
    expect(f2Passed.length).toBeGreaterThan(0);
    for (const event of f2Passed) {
      if (event.type !== 'check-passed') continue;
      expect(event.evidence.sessionId).not.toBe(killedSession?.sessionId);
      expect(secondSessions.has(event.evidence.sessionId)).toBe(true);
    }
    // F1's flip evidence was not lost: it is still session 2's flip, and a later re-run
    // re-verified it on the final commit.
    expect(f1Evidence?.trigger).toBe('flip');
    expect(
      events.filter((event) => event.type === 'session-interrupted').map((event) => event.workerId),
    ).toEqual(['first']);
    expect(processesWith(`sleep ${sleep}`)).toEqual([]);
  }, 300_000);
});
