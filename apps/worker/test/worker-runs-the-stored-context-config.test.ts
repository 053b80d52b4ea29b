import { describe, expect, it } from 'vitest';
import { waitFor } from '@baton/test-support';
import type { BatonControl } from '@baton/projects';
import type { ModelSim, SimRequestRecord } from '@baton/model-sim';
import { randomProjectId } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/** Runs one session of a new project and returns the model requests it sent. */
async function oneSession(
  world: { control: BatonControl; sim: ModelSim; projects: string[] },
  input: Record<string, unknown>,
): Promise<SimRequestRecord[]> {
  const id = randomProjectId('ctx');
  world.projects.push(id);
  const before = world.sim.received.length;
  await world.control.createProject({
    id,
    goal: 'Build a greeter\n- print hello',
    budgets: { maxSessions: 1 },
    ...input,
  });
  await world.control.enqueue(id);
  await waitFor(
    `${id} ran its session`,
    async () => (await world.control.getProject(id))?.status === 'paused',
    45_000,
  );
  return world.sim.received.slice(before).filter((entry) => entry.path === '/v1/messages');
}

describe('a worker process runs each project with the context config stored at its creation', () => {
  const world = useProcessWorld('baton-worker-context-');

  it("uses the project's config, not the worker's own BATON_CONTEXT_*, and says so at start", async () => {
    const worker = await spawnWorker(
      simWorkerEnv(
        { prefix: world.prefix, simUrl: world.sim.url },
        {
          BATON_MODEL: 'claude-sonnet-4-6',
          BATON_CONTEXT_PRESET: 'long-horizon',
          BATON_CONTEXT_PROMPT_CACHE: 'off',
        },
      ),
    );
    world.workers.push(worker);
    // stderr and stdout are separate pipes: wait for the line rather than assume it came first.
    await waitFor('the context notice', () =>
      worker.stderr.includes(
        'baton worker: BATON_CONTEXT_PRESET, BATON_CONTEXT_PROMPT_CACHE are not applied by workers: each project runs the context config stored when it was created',
      ),
    );

    const stored = await oneSession(world, {
      context: { preset: 'off', promptCache: { prefixTtl: '1h' } },
    });
    expect(stored.length).toBeGreaterThan(1);
    expect(stored.every((entry) => entry.contextEdits === undefined)).toBe(true);
    expect(stored.every((entry) => entry.cache?.breakpointTtls[0] === '1h')).toBe(true);

    // A project created with nothing set runs the default preset, whatever the worker's env says.
    const defaults = await oneSession(world, {});
    expect(defaults.length).toBeGreaterThan(1);
    expect(
      defaults.every((entry) => entry.contextEdits?.join() === 'clear_tool_uses_20250919'),
    ).toBe(true);
    expect(defaults.every((entry) => entry.cache?.breakpointTtls[0] === '5m')).toBe(true);
  });
});
