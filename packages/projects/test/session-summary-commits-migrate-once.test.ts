/**
 * Session summaries stored before sessions listed their commits get an empty list once (Redis
 * `2026-12-04-session-summary-commits` by `runRedisMigrations`, `BATON_HOME`
 * `2026-12-04-local-session-summary-commits` by `openFileProjectLog`): `SessionSummary.commits` is
 * required and readers take it as it is. The old shape is written raw.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createFileProjectLog,
  openFileProjectLog,
  runRedisMigrations,
  type SessionSummary,
} from '../src/index.js';
import { scripts } from '../src/internal/scripts.js';
import { newProjectRecord, sessionSummary } from './support/project-log-conformance.js';
import { useControlWorld } from './support/redis.js';

const MIGRATION = '2026-12-04-session-summary-commits';
const FILE_MIGRATION = '2026-12-04-local-session-summary-commits';

/** `summary` as a version before commit lists stored it. */
function stored(summary: SessionSummary): string {
  const { commits, ...older } = summary;
  void commits;
  return JSON.stringify(older);
}

describe('session summaries stored before commit lists', () => {
  const world = useControlWorld();

  it('get an empty list once in Redis, and a summary with commits keeps them', async () => {
    await world.control.createProject({ id: 'old', goal: 'Old sessions' });
    const { keys } = world.control;
    const old = sessionSummary({ sessionId: 's1', sessionNumber: 1 });
    const current = sessionSummary({ sessionId: 's2', sessionNumber: 2, commits: ['abc'] });
    await world.redis.rpush(keys.sessions('old'), stored(old), JSON.stringify(current));
    await world.redis.hdel(keys.migrations, MIGRATION);
    expect((await world.control.listSessions('old'))[0]?.malformed).toMatch(/^commits: /);

    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(await world.control.listSessions('old')).toEqual([old, current]);
    expect(await world.redis.lindex(keys.sessions('old'), 1)).toBe(JSON.stringify(current));

    // Run again: nothing changes.
    const settled = await world.redis.lrange(keys.sessions('old'), 0, -1);
    await world.redis.hdel(keys.migrations, MIGRATION);
    expect(await runRedisMigrations({ redis: world.redis, keys })).toEqual([MIGRATION]);
    expect(await world.redis.lrange(keys.sessions('old'), 0, -1)).toEqual(settled);
  });

  it('are not recorded as migrated when the list keeps changing under the migration', async () => {
    await world.control.createProject({ id: 'busy', goal: 'Busy sessions' });
    const { keys } = world.control;
    const list = keys.sessions('busy');
    const old = sessionSummary({ sessionId: 's1', sessionNumber: 1 });
    const current = sessionSummary({ sessionId: 's2', sessionNumber: 2, commits: ['abc'] });
    await world.redis.rpush(list, stored(old));
    await world.redis.hdel(keys.migrations, MIGRATION);
    // Before every compare-and-set a summary is pushed at the head: each entry moves.
    const replace = scripts.script('replaceListEntry').command;
    scripts.pipeline(world.redis); // registers the scripts on the real client
    const redis = new Proxy(world.redis, {
      get(target, property) {
        if (property === replace) {
          return async (...args: unknown[]) => {
            await target.lpush(list, JSON.stringify(current));
            return (target as unknown as Record<string, (...a: unknown[]) => unknown>)[replace]!(
              ...args,
            );
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
      },
    });

    await expect(runRedisMigrations({ redis, keys })).rejects.toThrow(
      'session summaries of project busy kept changing while they were upgraded: start again',
    );
    expect(await world.redis.hget(keys.migrations, MIGRATION)).toBeNull();
    expect(await world.redis.lindex(list, -1)).toBe(stored(old));
  });

  it('get an empty list once under BATON_HOME', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-commits-'));
    try {
      const log = await openFileProjectLog({ home });
      await log.create(newProjectRecord('old'));
      const file = path.join(home, 'projects', 'old', 'sessions.jsonl');
      const old = sessionSummary({ sessionId: 's1', sessionNumber: 1 });
      const current = sessionSummary({ sessionId: 's2', sessionNumber: 2, commits: ['abc'] });
      await writeFile(file, `${stored(old)}\n${JSON.stringify(current)}\n`);
      const migrations = path.join(home, 'migrations.json');
      const applied = (JSON.parse(await readFile(migrations, 'utf8')) as { applied: string[] })
        .applied;
      const forget = () =>
        writeFile(
          migrations,
          JSON.stringify({ applied: applied.filter((id) => id !== FILE_MIGRATION) }),
        );
      await forget();
      expect((await createFileProjectLog({ home }).listSessions('old'))[0]?.malformed).toMatch(
        /^commits: /,
      );

      expect(await (await openFileProjectLog({ home })).listSessions('old')).toEqual([
        old,
        current,
      ]);
      const settled = await readFile(file, 'utf8');
      await forget();
      await openFileProjectLog({ home });
      expect(await readFile(file, 'utf8')).toBe(settled);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
