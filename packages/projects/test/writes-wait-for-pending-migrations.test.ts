import { describe, expect, it } from 'vitest';
import { REDIS_MIGRATIONS, isProjectError, runRedisMigrations } from '../src/index.js';
import { randomProjectId, useControlWorld } from './support/redis.js';

const ALL_IDS = REDIS_MIGRATIONS.map((migration) => migration.id);

/** The code and line a call failed with, or `accepted`. */
async function outcome(call: () => Promise<unknown>): Promise<string> {
  return call().then(
    () => 'accepted',
    (error: unknown) =>
      isProjectError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`,
  );
}

describe('the control API refuses writes while a data migration is pending', () => {
  const world = useControlWorld();

  it('records a fresh prefix as migrated, so a project is created before any worker ran', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    expect((await world.redis.hkeys(world.control.keys.migrations)).sort()).toEqual(
      [...ALL_IDS].sort(),
    );
    expect(await world.redis.hget(world.control.keys.migrations, ALL_IDS[0]!)).toMatch(/ fresh$/);
    expect(await outcome(() => world.control.enqueue(id))).toBe('accepted');
  });

  it('refuses every write in one line on data no worker migrated yet, reads still answer, and writes go on once migrated', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    // What an earlier Baton left: its projects and no record of migrations.
    await world.redis.del(world.control.keys.migrations);
    const { control } = world;
    const other = randomProjectId();
    const writes: [string, () => Promise<unknown>][] = [
      ['createProject', () => control.createProject({ id: other, goal: 'y' })],
      ['enqueue', () => control.enqueue(id)],
      ['pause', () => control.pause(id)],
      ['resume', () => control.resume(id)],
      ['cancel', () => control.cancel(id)],
      ['say', () => control.say(id, 'hello')],
      ['deleteProject', () => control.deleteProject(id)],
    ];
    for (const [label, write] of writes) {
      const refused = await outcome(write);
      expect(refused, label).toMatch(
        /^migration_pending: Redis \(prefix \{bt-[0-9a-f]+\}\) holds data of an earlier Baton that is not migrated yet \(2026-12-04-project-index, .*\): start a worker or `baton up` of this version first, which migrates it \(docs\/operations\.md#upgrading\)$/,
      );
    }
    // Nothing was written; reads answer as before.
    expect(await control.getProject(other)).toBeNull();
    const project = await control.getProject(id);
    expect(project?.status).toBe('queued');
    expect(await control.readEvents(id, { last: 10 })).toEqual([]);
    expect(await control.listGuidance(id)).toEqual([]);

    expect(await runRedisMigrations({ redis: world.redis, keys: control.keys })).toEqual(ALL_IDS);
    expect((await control.pause(id)).changed).toBe(true);
    expect((await control.createProject({ id: other, goal: 'y' })).id).toBe(other);
  });

  it('refuses on a prefix a worker of an earlier version started on, with no project yet', async () => {
    await world.redis.set(
      world.control.keys.deployment,
      JSON.stringify({ id: 'earlier', createdAt: 1 }),
    );
    expect(
      await outcome(() => world.control.createProject({ id: randomProjectId(), goal: 'x' })),
    ).toMatch(/^migration_pending: /);
    expect(await world.redis.exists(world.control.keys.migrations)).toBe(0);
  });

  it('refuses writes on data a newer Baton migrated', async () => {
    const id = randomProjectId();
    await world.control.createProject({ id, goal: 'x' });
    await world.redis.hset(world.control.keys.migrations, '2099-01-01-from-a-newer-baton', 'x');
    expect(await outcome(() => world.control.pause(id))).toMatch(
      /^newer_data: .*\(migration 2099-01-01-from-a-newer-baton\)/,
    );
  });
});
