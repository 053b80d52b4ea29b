import { randomHex } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { commandsOn, useMonitoredDashboard } from './support/monitored-dashboard.js';
import { seedTurn } from './support/seed.js';
import { connectSse } from './support/sse-client.js';

// A long-running project has a long event stream and memory files written hundreds of times.
// What the project page asks for must cost Redis work in proportion to what it shows: pinned
// here by the exact commands MONITOR sees, as storage-redis's commands-sent test does.
const EVENTS = 10_000;
const VERSIONS = 500;

const cost = useMonitoredDashboard();

/** A paused project (no live polling) with `EVENTS` turn events and a file of `VERSIONS` versions. */
async function seedLongProject(): Promise<string> {
  const id = `long-${randomHex()}`;
  await cost.dashboard.control.createProject({ id, goal: 'Long\n- one' });
  await cost.dashboard.repository.transition(id, 'paused', { reason: 'test' });
  const key = cost.dashboard.control.keys.events(id);
  for (let start = 0; start < EVENTS; start += 1_000) {
    const pipeline = cost.redis.pipeline();
    for (let index = start; index < start + 1_000; index += 1) {
      const event = { ...seedTurn(id, 's1', index + 1, { inputTokens: 10 }), at: index };
      pipeline.xadd(key, '*', 'e', JSON.stringify(event));
    }
    await pipeline.exec();
  }
  const store = await cost.dashboard.control.memoryStore(id);
  await store.write('progress.md', 'version 0', { mode: 'create', session: 's0' });
  for (let version = 1; version < VERSIONS; version += 1) {
    await store.write('progress.md', `version ${version}`, {
      mode: 'overwrite',
      session: `s${version}`,
    });
  }
  return id;
}

describe('the project page costs O(shown), not O(history)', () => {
  it('the event tail, the token chart and a file history read only what they return', async () => {
    const id = await seedLongProject();
    const eventsKey = cost.dashboard.control.keys.events(id);
    const store = await cost.dashboard.control.memoryStore(id);
    // Let the hub see the project once before measuring (its first look reads a bounded tail too).
    await (await cost.dashboard.request(`/api/projects/${id}`)).json();

    let tail: { events: unknown[] } = { events: [] };
    const tailSent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, async () => {
      tail = (await (
        await cost.dashboard.request(`/api/projects/${id}/events?limit=50`)
      ).json()) as {
        events: unknown[];
      };
    });
    expect(tail.events).toHaveLength(50);
    expect(commandsOn(tailSent, eventsKey)).toEqual([
      {
        command: 'xrevrange',
        args: [eventsKey, '+', '-', 'COUNT', '50'],
        source: expect.any(String),
      },
    ]);

    let chart: { turns: Array<{ turn: number }> } = { turns: [] };
    const chartSent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, async () => {
      chart = (await (
        await cost.dashboard.request(`/api/projects/${id}/tokens?limit=300`)
      ).json()) as {
        turns: Array<{ turn: number }>;
      };
    });
    expect(chart.turns).toHaveLength(300);
    expect(chart.turns.at(-1)?.turn).toBe(EVENTS);
    expect(commandsOn(chartSent, eventsKey)).toEqual([
      {
        command: 'xrevrange',
        args: [eventsKey, '+', '-', 'COUNT', '300'],
        source: expect.any(String),
      },
    ]);
    // Without a limit the chart still reads a bounded tail, never the whole stream.
    const defaultChartSent = await cost.monitor.commandsSentBy(cost.dashboard.prefix, () =>
      cost.dashboard.request(`/api/projects/${id}/tokens`).then((response) => response.json()),
    );
    expect(commandsOn(defaultChartSent, eventsKey).map((entry) => entry.args.at(-1))).toEqual([
      '500',
    ]);

    let history: { versions: unknown[]; changes: Array<{ session?: string }> } = {
      versions: [],
      changes: [],
    };
    const historySent = await cost.monitor.commandsSentBy(cost.dashboard.memoryPrefix, async () => {
      history = (await (
        await cost.dashboard.request(
          `/api/projects/${id}/memory/history?path=/memories/progress.md`,
        )
      ).json()) as typeof history;
    });
    expect(history.versions).toHaveLength(5);
    expect(history.changes.at(-1)?.session).toBe(`s${VERSIONS - 1}`);
    // The file's body, its hash and its own history list (depth 5: the file + 4 older), nothing
    // else: not the namespace's change feed, whose length grows with every write.
    expect(historySent.map((entry) => entry.command)).toEqual(['get', 'hget', 'lrange']);
    expect(historySent.find((entry) => entry.command === 'lrange')?.args).toEqual([
      store.keys.history('progress.md'),
      '0',
      '3',
    ]);
    expect(historySent.some((entry) => entry.args.includes(store.keys.feed))).toBe(false);
  });

  it("opening one project's live page reads that project, not the fleet's running projects", async () => {
    const watched = `watched-${randomHex()}`;
    await cost.dashboard.control.createProject({ id: watched, goal: 'Watched\n- one' });
    const running: string[] = [];
    for (let index = 0; index < 3; index += 1) {
      const id = `running-${index}-${randomHex()}`;
      await cost.dashboard.control.createProject({ id, goal: 'Running\n- one' });
      await cost.dashboard.repository.transition(id, 'running', { reason: 'test' });
      running.push(id);
    }
    let close = () => {};
    const sent = await cost.monitor
      .commandsSentBy(cost.dashboard.prefix, async () => {
        const client = await connectSse(
          new URL(`/api/projects/${watched}/stream`, cost.dashboard.server.url).toString(),
        );
        close = () => client.close();
        await client.next((message) => message.event === 'snapshot');
      })
      .finally(() => close());
    expect(commandsOn(sent, cost.dashboard.control.keys.events(watched)).length).toBeGreaterThan(0);
    for (const id of running) {
      // Neither their records (a page of running projects) nor their event streams.
      expect(commandsOn(sent, cost.dashboard.control.keys.project(id))).toEqual([]);
      expect(commandsOn(sent, cost.dashboard.control.keys.events(id))).toEqual([]);
    }
  });
});
