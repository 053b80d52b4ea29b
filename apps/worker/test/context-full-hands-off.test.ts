import { readProgressEntries } from '@baton/session';
import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

const MODEL = 'sim-small-context';
const WINDOW = 10_000;
const FEATURES = 40;

describe('a worker on a model with a small context window', () => {
  const world = useProcessWorld('baton-context-full-', { contextWindow: { [MODEL]: WINDOW } });

  it('completes a 40-feature project through context hand-offs, every session logged, none failed', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const worker = await spawnWorker(
      simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_MODEL: MODEL }),
    );
    workers.push(worker);
    const id = randomProjectId('full');
    projects.push(id);
    const bullets = Array.from({ length: FEATURES }, (_, index) => `- operation ${index + 1}`);
    await control.createProject({
      id,
      goal: ['A calculator. [sim:keep-going]', ...bullets].join('\n'),
    });
    await control.enqueue(id);

    const done = await waitForCompleted(control, id, 600_000);
    expect(done.counters.featuresPassing).toBe(FEATURES);

    const sessions = await control.listSessions(id);
    expect(sessions.every((session) => session.outcome !== 'failed')).toBe(true);
    const events = (await control.readEvents(id, { count: 100_000 })).map((entry) => entry.event);
    const full = events.filter((event) => event.type === 'context-full');
    expect(full.length).toBeGreaterThanOrEqual(3);
    for (const event of full) {
      expect(event).toMatchObject({ cause: 'counter', contextWindow: WINDOW });
    }
    // Baton counted and handed off before the API had to refuse a prompt.
    expect(sim.received.filter((record) => record.status === 400)).toEqual([]);
    const handedOff = sessions.filter((session) => session.reason.includes('context window'));
    expect(handedOff).toHaveLength(full.length);

    // Every session has its progress entry in the Redis memory (archive included).
    const store = await control.memoryStore(id);
    const entries = await readProgressEntries(store);
    for (const session of sessions) {
      expect(entries.some((entry) => entry.session === session.sessionNumber)).toBe(true);
    }
    // ... and each hand-off says in the session's entry at which turn the context filled.
    for (const event of full) {
      const session = sessions.find((summary) => summary.sessionId === event.sessionId);
      const entry = entries.find((candidate) => candidate.session === session?.sessionNumber);
      expect(entry?.text).toContain(`filled at turn ${event.turn}`);
    }
  }, 900_000);
});
