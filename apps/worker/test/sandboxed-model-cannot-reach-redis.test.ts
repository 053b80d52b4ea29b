import { randomHex, REDIS_URL } from '@baton/test-support';
import { scriptedCommands, startModelSim, type ModelSim } from '@baton/model-sim';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/**
 * End to end through a worker process: in the first turn of every session the model tries to
 * reach Redis on loopback (write a key, PING) and to read the worker's environment. The sandbox
 * stops every attempt, and the project still completes.
 */
describe('a worker whose model tries to reach Redis', () => {
  const world = useProcessWorld('baton-worker-sandbox-');
  let sim: ModelSim | undefined;
  let redis: Redis | undefined;
  afterEach(async () => {
    await sim?.close();
    redis?.disconnect();
  });

  it('fails to, and the project completes', async () => {
    const { prefix, control, workers, projects } = world;
    redis = new Redis(REDIS_URL);
    const canaryKey = `baton-sandbox-canary-${randomHex(8)}`;
    await redis.set(canaryKey, 'untouched', 'EX', 600);
    const results: { command: string; output: string }[] = [];
    sim = await startModelSim({
      port: 0,
      script: scriptedCommands({
        commands: [
          // Spelled so the command policy (a guard against mistakes) lets it through to the sandbox.
          `d=/de; exec 3<>\${d}v/tcp/127.0.0.1/6379 && printf 'SET ${canaryKey} pwned\\r\\nPING\\r\\n' >&3 && timeout 2 cat <&3`,
          `python3 -c "import socket; s=socket.create_connection(('127.0.0.1', 6379), 2); s.sendall(b'PING\\r\\n'); print(s.recv(64))"`,
          `cat /proc/$PPID/environ /proc/1/environ | tr '\\0' '\\n'; env`,
        ],
        onResult: (result) => results.push(result),
      }),
    });
    const worker = await spawnWorker(simWorkerEnv({ prefix, simUrl: sim.url }));
    workers.push(worker);
    const id = randomProjectId('redis');
    projects.push(id);
    await control.createProject({ id, goal: 'Build a greeter\n- print hello\n- print goodbye' });
    await control.enqueue(id);

    const done = await waitForCompleted(control, id, 60_000);
    expect(done.counters.featuresPassing).toBe(2);

    // Three attempts in the first turn of every session, each refused inside the sandbox.
    expect(results.length).toBe(3 * done.counters.sessions);
    for (const result of results) {
      expect(result.output).not.toContain('PONG');
      expect(result.output).not.toContain('test-key');
      expect(result.output).not.toContain(REDIS_URL);
    }
    for (const result of results.filter((entry) => !entry.command.startsWith('cat'))) {
      expect(result.output).toMatch(/Connection refused|Network is unreachable|ConnectionRefused/);
    }
    expect(await redis.get(canaryKey)).toBe('untouched');
    expect(done.sessionSandbox).toMatchObject({ mode: 'bubblewrap' });
    await redis.del(canaryKey);

    const starts = (await control.readEvents(id, { count: 10_000 }))
      .map((entry) => entry.event)
      .filter((event) => event.type === 'session-start');
    expect(starts.length).toBe(done.counters.sessions);
    expect(starts.every((event) => (event.sandbox as { mode: string }).mode === 'bubblewrap')).toBe(
      true,
    );
  });
});
