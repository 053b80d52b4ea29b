import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBatonControl, type BatonControl } from '@baton/projects';
import {
  createBareRemote,
  git,
  startRedisServer,
  startTcpProxy,
  waitFor,
  type RedisServer,
  type TcpProxy,
} from '@baton/test-support';
import type { Checkpoint } from '@baton/workspace';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startInProcessWorker } from './support/in-process-worker.js';
import { randomPrefix, randomProjectId, waitForCompleted } from './support/redis.js';
import { createScriptedRunner } from './support/scripted-runner.js';

/** Short locks and leases, so the other worker takes over within seconds of the partition. */
const FAST_TAKEOVER = { lockDurationMs: 2_000, stalledIntervalMs: 1_000, leaseTtlMs: 2_000 };

/**
 * A `pre-receive` hook that holds every push of a commit carrying `stale.txt` until the file
 * `release` exists: the cut-off session's push is under way, not landed, while its lease expires.
 */
async function holdStalePushes(remote: string, dir: string): Promise<void> {
  const hook = path.join(remote, 'hooks', 'pre-receive');
  await writeFile(
    hook,
    [
      '#!/bin/sh',
      'while read old new ref; do',
      '  if git cat-file -e "$new:stale.txt" 2>/dev/null; then',
      `    touch '${dir}/arrived'`,
      `    while [ ! -e '${dir}/release' ]; do sleep 0.05; done`,
      '  fi',
      'done',
      '',
    ].join('\n'),
  );
  await chmod(hook, 0o755);
}

describe("fencing a checkpoint push: a cut-off session's push that lands late", () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let control: BatonControl;
  let root: string;
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeEach(async () => {
    redis = await startRedisServer();
    proxy = await startTcpProxy({ targetPort: redis.port });
    control = createBatonControl({ url: redis.url, prefix: randomPrefix() });
    root = await mkdtemp(path.join(os.tmpdir(), 'baton-late-push-'));
  });

  afterEach(async () => {
    proxy.restore();
    await writeFile(path.join(root, 'release'), '').catch(() => undefined);
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await control.close();
    await proxy.close();
    await redis.stop();
    await rm(root, { recursive: true, force: true });
  });

  it('is kept on a baton-kept/ branch; the new holder takes the branch back and completes the project', async () => {
    const remote = await createBareRemote(root);
    await holdStalePushes(remote, root);
    const id = randomProjectId('latepush');
    await control.createProject({ id, goal: 'Build it\n- one\n- two', repo: remote, base: 'main' });

    // Worker A: its first session commits stale.txt and pushes; the push hangs in the remote.
    const workerA = await startInProcessWorker({
      prefix: control.keys.prefix,
      url: proxy.url,
      workerId: 'worker-a',
      ...FAST_TAKEOVER,
      runSession: createScriptedRunner({
        onStart: async ({ workspace, checkpoint }) => {
          await writeFile(path.join(workspace, 'stale.txt'), 'from the cut-off session\n');
          // It never returns in time: its event goes to Redis over the cut link.
          await checkpoint('stale work');
        },
      }),
    });
    cleanups.push(() => workerA.stop(1_000));
    await control.enqueue(id);
    await waitFor('the push of worker A reached the remote', () =>
      existsSync(path.join(root, 'arrived')),
    );

    // The partition: A's lease expires while its push is still under way.
    proxy.stall();
    let holderCheckpoint: Checkpoint | undefined;
    let staleTip = '';
    const logLines: Array<Record<string, unknown>> = [];
    const workerB = await startInProcessWorker({
      prefix: control.keys.prefix,
      url: redis.url,
      workerId: 'worker-b',
      // Worker B's JSON log, as `baton worker` writes it.
      logger: pino(
        { level: 'info' },
        { write: (line: string) => logLines.push(JSON.parse(line) as Record<string, unknown>) },
      ),
      ...FAST_TAKEOVER,
      runSession: createScriptedRunner({
        onStart: async ({ sessionNumber, workspace, checkpoint }) => {
          if (holderCheckpoint !== undefined) return;
          // B prepared its clone from the branch as it was (A's push not landed): now A's lands.
          await writeFile(path.join(root, 'release'), '');
          staleTip = await waitFor('the late push landed', () =>
            git(remote, 'ls-tree', '--name-only', `baton/${id}`).includes('stale.txt')
              ? git(remote, 'rev-parse', `baton/${id}`)
              : null,
          );
          await writeFile(path.join(workspace, 'holder.txt'), `session ${sessionNumber}\n`);
          holderCheckpoint = await checkpoint('holder work');
        },
      }),
    });
    cleanups.push(() => workerB.stop());
    // Slow under load: three sessions, each preparing its clone.
    const done = await waitForCompleted(control, id, 120_000);
    expect(done.counters.featuresPassing).toBe(2);

    // A's commit is kept on a side branch named by its fence; B's work is on the project branch.
    const staleFence = git(
      remote,
      'log',
      '-1',
      '--format=%(trailers:key=Baton-Fence,valueonly)',
      staleTip,
    );
    const keptOn = `baton-kept/${id}/${staleFence}-${staleTip.slice(0, 12)}`;
    expect(holderCheckpoint).toMatchObject({
      pushed: true,
      replacedStale: { tip: staleTip, commits: 1, keptOn, fence: Number(staleFence) },
    });
    expect(git(remote, 'rev-parse', keptOn)).toBe(staleTip);
    const files = git(remote, 'ls-tree', '-r', '--name-only', `baton/${id}`).split('\n');
    expect(files).toContain('holder.txt');
    expect(files).not.toContain('stale.txt');
    expect(done.lastCheckpoint).toBe(git(remote, 'rev-parse', `baton/${id}`));

    // The user sees it: the checkpoint event names the side branch.
    const events = await control.readEvents(id, { count: 10_000 });
    const warned = events.filter(
      (entry) => entry.event.type === 'checkpoint' && 'replacedStale' in entry.event,
    );
    expect(
      warned.map((entry) => (entry.event as { replacedStale?: unknown }).replacedStale),
    ).toEqual([{ tip: staleTip, fence: Number(staleFence), commits: 1, keptOn }]);
    // ...the session's summary (`baton status`) keeps it...
    const replacedStale = { tip: staleTip, fence: Number(staleFence), commits: 1, keptOn };
    const sessions = await control.listSessions(id);
    // B took over session 1: A's never finished.
    const holderSession = 1;
    expect(sessions.filter((session) => session.replacedStale !== undefined)).toEqual([
      expect.objectContaining({ sessionNumber: holderSession, replacedStale: [replacedStale] }),
    ]);
    // ...and the worker's JSON log says it in one warn line naming the project and the session.
    expect(logLines.filter((line) => line.replacedStale !== undefined)).toEqual([
      expect.objectContaining({
        level: 40,
        projectId: id,
        sessionNumber: holderSession,
        replacedStale,
        msg: `checkpoint took the branch back from a replaced session's late push; its commits are kept on ${keptOn}`,
      }),
    ]);
  }, 180_000);
});
