import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createBareRemote, git, waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

/** A `pre-receive` hook refusing every `refs/baton/memory/*` push, as some hosts' rules do. */
async function refuseMemoryRefs(remote: string): Promise<void> {
  const hook = path.join(remote, 'hooks', 'pre-receive');
  await writeFile(
    hook,
    [
      '#!/bin/sh',
      'while read old new ref; do',
      '  case "$ref" in refs/baton/memory/*) echo "refs/baton is not allowed here" >&2; exit 1;; esac',
      'done',
      '',
    ].join('\n'),
  );
  await chmod(hook, 0o755);
}

describe('a remote refusing refs/baton/memory/*', () => {
  it('is reported once per session (event and warn line), and the checkpoints still land', async () => {
    const { dir, redis, cli } = world;
    const remote = await createBareRemote(dir);
    await refuseMemoryRefs(remote);
    const id = redis.projectId('norefs');
    const enqueue = ['enqueue', '--project', id, '--goal', 'Greet\n- hello\n- bye'];
    expect((await cli([...enqueue, '--repo', remote, '--max-sessions', '2'])).code).toBe(0);
    const worker = world.startWorker('worker', { BATON_CHAIN_DELAY_MS: '0' });
    await waitFor(
      `${id} paused`,
      async () => (await redis.control.getProject(id))?.status === 'paused',
      120_000,
      100,
    );
    worker.kill('SIGTERM');
    await worker.done;

    const events = (await redis.control.readEvents(id, { count: 10_000 })).map(
      ({ event }) => event,
    );
    const pushed = events.filter((event) => event.type === 'checkpoint' && event.pushed);
    const snapshots = events.filter((event) => event.type === 'memory-snapshot');
    // Every session pushed checkpoints (more than one in all); each said the refusal once.
    expect(pushed.length).toBeGreaterThan(2);
    expect(snapshots.map((event) => event.sessionNumber)).toEqual([1, 2]);
    for (const event of snapshots) {
      expect(event).toMatchObject({ pushed: false });
      expect((event as { error?: string }).error).toContain('refs/baton is not allowed here');
    }
    const warned = (worker.stdout() + worker.stderr())
      .split('\n')
      .filter((line) => line.includes('memory snapshot not saved'));
    expect(warned).toHaveLength(2);
    expect(git(remote, 'for-each-ref', 'refs/baton')).toBe('');
    expect(git(remote, 'rev-parse', `baton/${id}`)).toBe(
      (await redis.control.getProject(id))?.lastCheckpoint,
    );
  }, 180_000);
});
