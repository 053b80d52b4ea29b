import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { REDIS_URL } from '@baton/test-support';
import { runCli } from './helpers.js';
import { oneLine, useRedisWorld, type RedisWorld } from './redis-fixtures.js';

let dir: string;
let world: RedisWorld;
useRedisWorld((fixture) => ({ dir, world } = fixture));

describe('baton verbs that write wait for a Redis data migration', () => {
  it('refuse in one line (exit 2) on data no worker of this version migrated; status still answers', async () => {
    const id = world.projectId('mig');
    await world.control.createProject({ id, goal: '- a' });
    // What an earlier Baton left: its projects and no record of migrations.
    const redis = new Redis(REDIS_URL);
    try {
      await redis.del(world.control.keys.migrations);
    } finally {
      redis.disconnect();
    }
    const env = world.env(dir);
    const line =
      /^baton: Redis \(prefix \{cli-test-[0-9a-f]+\}\) holds data of an earlier Baton that is not migrated yet \(.*\): start a worker or `baton up` of this version first, which migrates it \(docs\/operations\.md#upgrading\)\.$/;
    const other = world.projectId('mig2');
    for (const args of [
      ['enqueue', '--project', other, '--goal', 'y'],
      ['cancel', id],
      ['say', id, 'hello'],
    ]) {
      const refused = await runCli(args, { cwd: dir, env });
      expect(refused.code, args[0]).toBe(2);
      expect(oneLine(refused.stderr), args[0]).toMatch(line);
    }
    expect(await world.control.getProject(other)).toBeNull();
    const status = await runCli(['status', id], { cwd: dir, env });
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(id);
  });
});
