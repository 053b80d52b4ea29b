import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { connectSse, type SseConnection, type SseMessage } from './support/sse-client.js';
import { seedTurn, seedSession, seedSessionEnd } from './support/seed.js';

type Entry = { id: string; event: { type: string; turn?: number } };

describe('live updates over Server-Sent Events', () => {
  let dashboard: TestDashboard;
  const connections: SseConnection[] = [];

  beforeEach(async () => {
    dashboard = await startTestDashboard();
  });

  afterEach(async () => {
    for (const connection of connections.splice(0)) connection.close();
    await dashboard.close();
  });

  async function open(pathname: string, headers: Record<string, string> = {}) {
    const connection = await connectSse(
      new URL(pathname, dashboard.server.url).toString(),
      headers,
    );
    connections.push(connection);
    return connection;
  }

  type ReadMethod = 'projectChanges' | 'readEvents' | 'waitForEvents';
  const READ_METHODS: readonly unknown[] = ['projectChanges', 'readEvents', 'waitForEvents'];

  /**
   * A second dashboard server on the test's control API, reading the change feed every 20 ms,
   * whose hub reads (`projectChanges`, `readEvents`, `waitForEvents`) go through `around`: to
   * count them or to hold them.
   */
  async function serverAround(around: (method: ReadMethod, call: () => unknown) => unknown) {
    const wrapped = new Proxy(dashboard.control, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (READ_METHODS.includes(property) && typeof value === 'function') {
          return (...args: unknown[]) =>
            around(property as ReadMethod, () =>
              (value as (...inner: unknown[]) => unknown).apply(target, args),
            );
        }
        // The control keeps its state in private fields: its methods run on it, not on the proxy.
        return typeof value === 'function'
          ? (value as (...inner: unknown[]) => unknown).bind(target)
          : value;
      },
    });
    const { createDashboardServer } = await import('../src/index.js');
    return createDashboardServer({ control: wrapped, port: 0, token: '', pollIntervalMs: 20 });
  }

  function liveTurn(projectId: string, turn: number) {
    return seedTurn(projectId, 'live', turn, { inputTokens: 100 * turn });
  }

  const events = (connection: SseConnection): Entry[] =>
    connection.messages
      .filter((message) => message.event === 'event')
      .map((message) => message.data as Entry);

  it('sends a project snapshot, then each new event with its stream id', async () => {
    const id = `s-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a' });
    const seeded = await seedSession(dashboard.repository, id, {
      sessionId: 's1',
      sessionNumber: 1,
      turns: [{ input: 10 }],
    });

    const stream = await open(`/api/projects/${id}/stream`);
    const snapshot = await stream.next((message) => message.event === 'snapshot');
    const data = snapshot.data as { project: { id: string }; events: Entry[]; sessions: unknown[] };
    expect(data.project.id).toBe(id);
    expect(data.sessions).toHaveLength(1);
    // Creation writes a project-status event before the seeded ones.
    expect(data.events.slice(-seeded.length).map((entry) => entry.id)).toEqual(seeded);
    expect(snapshot.id).toBe(seeded[seeded.length - 1]);

    const liveId = await dashboard.repository.appendEvent(id, liveTurn(id, 7));
    const live = await stream.next((message) => message.event === 'event');
    expect(live.id).toBe(liveId);
    expect((live.data as Entry).event).toMatchObject({ type: 'turn', turn: 7 });
  });

  it('resumes after Last-Event-ID with every missed event once, in order', async () => {
    const id = `r-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a' });
    const first = await open(`/api/projects/${id}/stream`);
    await first.next((message) => message.event === 'snapshot');
    const ids: string[] = [];
    for (let turn = 1; turn <= 3; turn++)
      ids.push(await dashboard.repository.appendEvent(id, liveTurn(id, turn)));
    await first.next((message) => message.id === ids[2]);
    const lastSeen = events(first).at(-1)?.id;
    expect(lastSeen).toBe(ids[2]);
    first.close();

    // Written while the browser was away.
    for (let turn = 4; turn <= 6; turn++)
      ids.push(await dashboard.repository.appendEvent(id, liveTurn(id, turn)));
    const second = await open(`/api/projects/${id}/stream`, { 'last-event-id': lastSeen! });
    const snapshot = await second.next((message) => message.event === 'snapshot');
    expect((snapshot.data as { events: unknown[] }).events).toEqual([]);
    // And written while it reconnects and afterwards.
    for (let turn = 7; turn <= 9; turn++)
      ids.push(await dashboard.repository.appendEvent(id, liveTurn(id, turn)));
    await second.next((message) => message.id === ids[8]);
    expect(events(second).map((entry) => entry.id)).toEqual(ids.slice(3));
    expect(events(second).map((entry) => entry.event.turn)).toEqual([4, 5, 6, 7, 8, 9]);
  });

  it('fans one reader out to every client of the projects stream', async () => {
    const id = `f-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a' });
    const clients = await Promise.all([
      open('/api/stream'),
      open('/api/stream'),
      open('/api/stream'),
    ]);
    for (const client of clients) {
      // No rows on connect (the page reads them with GET /api/projects): the fleet's counts.
      const snapshot = await client.next((message) => message.event === 'snapshot');
      expect(snapshot.data).toMatchObject({ counts: { queued: 1, running: 0 }, total: 1 });
      expect(Number(snapshot.id)).toBeGreaterThan(0);
    }
    await dashboard.repository.transition(id, 'running', { reason: 'test' });
    await dashboard.repository.markSessionStart(
      id,
      { sessionId: 'live', sessionNumber: 1, jobId: 'j', workerId: 'w', startedAt: Date.now() },
      false,
    );
    await dashboard.repository.appendEvent(id, liveTurn(id, 3));
    const isLive = (message: SseMessage) => {
      const project = message.data as {
        id: string;
        status: string;
        currentSession: { turn: number | null } | null;
      };
      return (
        message.event === 'project' &&
        project.status === 'running' &&
        project.currentSession?.turn === 3
      );
    };
    for (const client of clients) await client.next(isLive);
  });

  it('reads the project streams once per poll however many clients watch them', async () => {
    const id = `o-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a' });
    const calls = { projectChanges: 0, readEvents: 0, waitForEvents: 0 };
    const server = await serverAround((method, call) => {
      calls[method]++;
      return call();
    });
    const clients: SseConnection[] = [];
    try {
      for (let index = 0; index < 5; index++) {
        const client = await connectSse(`${server.url}/api/projects/${id}/stream`);
        clients.push(client);
        await client.next((message) => message.event === 'snapshot');
      }
      // Catch-up reads at connect time are done; from here only the hub reads.
      calls.projectChanges = 0;
      calls.readEvents = 0;
      calls.waitForEvents = 0;
      const eventId = await dashboard.repository.appendEvent(id, liveTurn(id, 1));
      for (const client of clients) await client.next((message) => message.id === eventId);
      await waitFor('a few polls', () => calls.projectChanges >= 5);
      const { projectChanges, readEvents, waitForEvents } = calls;
      // One poll = one change-feed read, at most one catch-up read after it (the record changed)
      // and one blocking read until the next poll, plus one per batch of events it delivered.
      // Five clients reading for themselves would make at least five reads per poll.
      expect(readEvents).toBe(0);
      expect(waitForEvents).toBeLessThanOrEqual(2 * projectChanges + 2);
    } finally {
      for (const client of clients) client.close();
      await server.close();
    }
  });

  it('reports every feature step even when several sessions end between two polls', async () => {
    const id = `k-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a\n- b' });
    // A gate on the hub's change-feed read: while it is closed the next poll waits, so both
    // sessions below end "between two polls", whatever the machine's speed.
    let gate: Promise<void> | undefined;
    let open: () => void = () => undefined;
    const server = await serverAround(async (method, call) => {
      if (method === 'projectChanges') await gate;
      return call();
    });
    const client = await connectSse(`${server.url}/api/projects/${id}/stream`);
    try {
      await client.next((message) => message.event === 'snapshot');
      // The hub has seen the project once (its cursor is set): wait for one project message.
      await client.next((message) => message.event === 'project');
      gate = new Promise((resolve) => {
        open = resolve;
      });
      await dashboard.repository.transition(id, 'running', { reason: 'test' });
      for (const [sessionNumber, passing] of [
        [1, 1],
        [2, 2],
      ] as const) {
        await seedSession(dashboard.repository, id, {
          sessionId: `s${sessionNumber}`,
          sessionNumber,
          turns: [{ input: 10 }],
          features: { before: [passing - 1, 2], after: [passing, 2] },
        });
        await dashboard.repository.appendEvent(
          id,
          seedSessionEnd(id, `s${sessionNumber}`, { passing, total: 2 }),
        );
      }
      open();
      const passing = (count: number) => (message: SseMessage) =>
        message.event === 'project' &&
        (message.data as { features: { passing: number } }).features.passing === count;
      await client.next(passing(2));
      const steps = client.messages
        .filter((message) => message.event === 'project')
        .map((message) => (message.data as { features: { passing: number } }).features.passing);
      // 0 (before), then each session's count in order, never going back.
      expect(steps.filter((count, index) => count !== steps[index - 1])).toEqual([0, 1, 2]);
    } finally {
      open();
      client.close();
      await server.close();
    }
  });

  it('pushes a new event to watchers as it is written, not at the next project list', async () => {
    const id = `p-${randomHex()}`;
    await dashboard.control.createProject({ id, goal: 'g\n- a' });
    const { createDashboardServer } = await import('../src/index.js');
    // The next list is 10 s away: a polling hub could not deliver the event within 2 s.
    const server = await createDashboardServer({
      control: dashboard.control,
      port: 0,
      token: '',
      pollIntervalMs: 10_000,
    });
    const client = await connectSse(`${server.url}/api/projects/${id}/stream`);
    try {
      await client.next((message) => message.event === 'snapshot');
      // The hub's first list is done (and its cursor set) once it published the project.
      await client.next((message) => message.event === 'project');
      for (let turn = 1; turn <= 3; turn++) {
        const appendedAt = Date.now();
        const eventId = await dashboard.repository.appendEvent(id, liveTurn(id, turn));
        await client.next((message) => message.id === eventId, 2_000);
        expect(Date.now() - appendedAt).toBeLessThan(2_000);
      }
      expect(events(client).map((entry) => entry.event.turn)).toEqual([1, 2, 3]);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('pings idle clients', async () => {
    const stream = await open('/api/stream');
    await stream.next((message) => message.event === 'ping', 5_000);
  });
});
