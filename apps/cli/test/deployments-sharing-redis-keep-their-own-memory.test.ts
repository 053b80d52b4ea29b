/**
 * Two deployments on one Redis, each with its own BATON_PREFIX, may hold a project of the same
 * id: each keeps that project's memory (and its fence) under its own memory prefix. Before, every
 * deployment kept memory under `baton:{<id>}`: the second one's first session was fenced out by
 * the first one's tokens and then resumed the other project's memory.
 */
import { Redis } from 'ioredis';
import { describe, expect, it, vi } from 'vitest';
import { REDIS_URL, waitFor } from '@baton/test-support';
import { createRedisWorld, oneLine, redisCliWorld, type RedisWorld } from './redis-fixtures.js';

// Two `baton` services and a few sessions each on a loaded 2-core machine.
vi.setConfig({ testTimeout: 360_000 });

const world = redisCliWorld();

describe('deployments sharing one Redis', () => {
  it('baton up and baton worker on two BATON_PREFIXes each complete their own project of one id with its own memory', async () => {
    const other = createRedisWorld();
    const id = world.redis.projectId('shared');
    world.closeAfter({
      close: async () => {
        await other.control.deleteProject(id).catch(() => undefined);
        await other.cleanup();
      },
    });
    const up = world.start(['up', '--port', '0', '--json'], {
      BATON_HOME: `${world.dir}/home-a`,
      BATON_CHAIN_DELAY_MS: '0',
    });
    const worker = world.startWorker('home-b', {
      BATON_PREFIX: other.prefix,
      BATON_CHAIN_DELAY_MS: '0',
    });
    await up.waitForOutput('"type":"ready"', 90_000);
    await worker.waitForOutput('"worker started"', 90_000);

    const run = async (deployment: RedisWorld, goal: string) => {
      const enqueued = await world.cli(['enqueue', '--project', id, '--goal', goal], {
        BATON_PREFIX: deployment.prefix,
      });
      expect(enqueued.code, enqueued.stderr).toBe(0);
      return waitFor(
        `project ${id} to complete under ${deployment.prefix}`,
        async () => {
          const project = await deployment.control.getProject(id);
          if (project?.status === 'failed' || project?.status === 'paused')
            throw new Error(`${id} ${project.status}: ${project.statusReason ?? ''}`);
          return project?.status === 'completed' ? project : null;
        },
        150_000,
      );
    };
    // One after the other, as found: the second deployment's leases start at token 1 again.
    const first = await run(world.redis, 'Greet\n- hello');
    const second = await run(other, 'Greet\n- hello\n- bye\n- thanks');
    expect(first.counters).toMatchObject({ featuresPassing: 1, featuresTotal: 1 });
    expect(second.counters).toMatchObject({ featuresPassing: 3, featuresTotal: 3 });
    // Each ran only its own sessions: none was fenced out and requeued.
    expect(second.counters.sessions).toBeLessThanOrEqual(first.counters.sessions + 2);

    const checklist = async (deployment: RedisWorld) => {
      const cat = await world.cli(['memory', 'cat', id, '/memories/features.json'], {
        BATON_PREFIX: deployment.prefix,
      });
      expect(cat.code, cat.stderr).toBe(0);
      return (JSON.parse(cat.stdout) as Array<{ description: string }>).map(
        (feature) => feature.description,
      );
    };
    expect(await checklist(world.redis)).toEqual(['hello']);
    expect(await checklist(other)).toEqual(['hello', 'bye', 'thanks']);
    // The dashboard `baton up` serves reads its deployment's memory too.
    const dashboardUrl = (
      JSON.parse(
        up
          .stdout()
          .split('\n')
          .find((line) => line.includes('"type":"ready"')) ?? '{}',
      ) as { dashboardUrl: string }
    ).dashboardUrl;
    const served = await fetch(
      `${dashboardUrl}/api/projects/${id}/memory/file?path=${encodeURIComponent('/memories/features.json')}`,
    );
    expect(served.status).toBe(200);
    expect(JSON.stringify(await served.json())).not.toContain('thanks');

    // Where the keys are: each deployment's memory prefix is its BATON_PREFIX without braces,
    // with the project's hash tag; nothing under the old shared `baton:{<id>}`.
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      for (const deployment of [world.redis, other]) {
        expect(deployment.control.keys.memoryPrefix).toBe(deployment.prefix.slice(1, -1));
        expect(await redis.exists(`${deployment.control.keys.memoryPrefix}:{${id}}:meta`)).toBe(1);
      }
      expect(await redis.keys(`baton:{${id}}:*`)).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });

  it('a BATON_PREFIX without a hash tag is refused in one line naming the variable', async () => {
    for (const args of [['projects'], ['up', '--port', '0']]) {
      const result = await world.cli(args, { BATON_PREFIX: 'baton' });
      expect(result.code, args.join(' ')).toBe(2);
      expect(oneLine(result.stderr)).toMatch(
        /^baton: BATON_PREFIX must contain one \{hash tag\} and no ":", got "baton"\.?$/,
      );
    }
  });
});
