import { startModelSim, type ModelSim } from '@baton/model-sim';
import { REDIS_URL } from '@baton/test-support';
import { describe, expect, it, vi } from 'vitest';
import { EXAMPLE_GOAL } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

/** A simulator on which every request hangs: whatever a process waits on, it waits forever. */
async function stallingSim(): Promise<ModelSim> {
  const stalls = Array.from({ length: 200 }, (_, i) => i + 1);
  return world.closeAfter(await startModelSim({ faults: { stallOn: stalls } }));
}

function simEnv(url: string) {
  return { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: url, BATON_CHAIN_DELAY_MS: '0' };
}

/** Queues a one-feature project for the worker under test. */
async function enqueue(): Promise<void> {
  const id = world.redis.projectId('ctrlc');
  const result = await world.cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello']);
  expect(result.code).toBe(0);
}

describe('a second Ctrl-C exits 130 at once, whatever the entry point', () => {
  it('baton run: the first asks for the end-of-session turn, the second does not wait for it', async () => {
    const stalls = await stallingSim();
    const run = world.start(
      ['run', '--goal-file', EXAMPLE_GOAL, '--model', 'sim-model'],
      simEnv(stalls.url),
    );
    await stalls.waitForStalled(1, 30_000);
    run.kill('SIGINT');
    await run.waitForOutput('Press Ctrl-C again to quit at once.');
    // The end-of-session turn waits on the model, which never answers: only a second Ctrl-C ends it.
    run.kill('SIGINT');
    expect((await run.done).code).toBe(130);
  });

  it('baton worker: the first drains, the second exits while a session still runs', async () => {
    const stalls = await stallingSim();
    const worker = world.start(['worker', '--port', '0'], simEnv(stalls.url));
    await worker.waitForOutput('"worker started"');
    await enqueue();
    await stalls.waitForStalled(1, 30_000);
    worker.kill('SIGINT');
    await worker.waitForOutput('"shutting down"');
    worker.kill('SIGINT');
    expect((await worker.done).code).toBe(130);
  });

  it('baton up: the first drains, the second exits while a session still runs', async () => {
    const stalls = await stallingSim();
    const up = world.start(['up', '--port', '0', '--json'], {
      ...simEnv(stalls.url),
      REDIS_URL: undefined,
      BATON_REDIS_PROBE_URL: REDIS_URL,
    });
    await up.waitForOutput('"type":"ready"', 60_000);
    await enqueue();
    await stalls.waitForStalled(1, 30_000);
    up.kill('SIGINT');
    await up.waitForOutput('"type":"stopping"');
    up.kill('SIGINT');
    expect((await up.done).code).toBe(130);
  });
});
