import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL } from '@baton/test-support';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

describe('baton verbs that write wait for a Redis data migration', () => {
  it('refuse in one line (exit 2) on data no worker of this version migrated; status still answers', async () => {
    const id = world.redis.projectId('mig');
    await world.redis.control.createProject({ id, goal: '- a' });
    // Paused: the worker `baton up` starts below has nothing to run.
    await world.redis.control.pause(id);
    // What an earlier Baton left: its projects, a config from before the workspace, repository,
    // model, budget, preset, hook and adoption fields were kept, and no record of migrations.
    const redis = new Redis(REDIS_URL);
    try {
      await redis.del(world.redis.control.keys.migrations);
      const key = world.redis.control.keys.project(id);
      const config = JSON.parse((await redis.hget(key, 'config')) ?? '{}') as {
        goal: string;
        context: unknown;
      };
      await redis.hset(
        key,
        'config',
        JSON.stringify({ goal: config.goal, context: config.context }),
      );
    } finally {
      redis.disconnect();
    }
    const line =
      /^baton: Redis \(prefix \{cli-test-[0-9a-f]+\}\) holds data of an earlier Baton that is not migrated yet \(.*\): start a worker or `baton up` of this version first, which migrates it \(docs\/operations\.md#upgrading\)\.$/;
    const other = world.redis.projectId('mig2');
    for (const args of [
      ['enqueue', '--project', other, '--goal', 'y'],
      ['cancel', id],
      ['say', id, 'hello'],
    ]) {
      const refused = await world.cli(args);
      expect(refused.code, args[0]).toBe(2);
      expect(oneLine(refused.stderr), args[0]).toMatch(line);
    }
    expect(await world.redis.control.getProject(other)).toBeNull();
    const status = await world.cli(['status', id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(id);

    // `baton up` (its worker) migrates the data: the old record reads with what its missing
    // fields meant, and writes are accepted again.
    const up = world.start(['up', '--port', '0', '--json']);
    await up.waitForOutput('"type":"ready"', 60_000);
    const migrated = await world.cli(['status', id, '--json']);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(JSON.parse(migrated.stdout)).toMatchObject({
      id,
      status: 'paused',
      workspace: null,
      repo: null,
      base: null,
      baseCommit: null,
      branch: `baton/${id}`,
      skipHooks: false,
      model: null,
      contextPreset: 'coding',
      budgets: {},
    });
    const cancelled = await world.cli(['cancel', id]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
  }, 180_000);
});
