import { describe, expect, it } from 'vitest';
import { randomProjectId } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

describe("the worker's own entry point (node dist/main.js)", () => {
  // Every request hangs: a draining worker waits for its session until the grace period ends.
  const world = useProcessWorld('baton-second-signal-', {
    faults: { stallOn: Array.from({ length: 50 }, (_, index) => index + 1) },
  });

  it('drains on the first SIGINT and exits 130 at once on the second, as `baton worker` does', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const worker = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url }));
    workers.push(worker);
    const id = randomProjectId('signal');
    projects.push(id);
    await control.createProject({ id, goal: 'Greet\n- hello' });
    await control.enqueue(id);
    await sim.waitForStalled(1, 30_000);

    worker.child.kill('SIGINT');
    await worker.waitForLog((line) => line.msg === 'shutting down');
    worker.child.kill('SIGINT');
    expect(await worker.exited).toBe(130);
    expect(worker.logs.some((line) => line.msg === 'second signal: exiting now')).toBe(true);
  });
});
