import { afterEach, describe, expect, it } from 'vitest';
import { randomHex, startRedisServer, waitFor, type RedisServer } from '@baton/test-support';
import { createBatonControl, ProjectRepository, type BatonControl } from '@baton/projects';
import { Redis } from 'ioredis';
import { createEventHub, type EventHub, type HubMessage } from '../src/internal/event-hub.js';
import { spyOnControl } from './support/spy-control.js';

describe('event hub while Redis is down', () => {
  let server: RedisServer | undefined;
  let control: BatonControl | undefined;
  let hub: EventHub | undefined;
  let redis: Redis | undefined;

  afterEach(async () => {
    await hub?.close();
    await control?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('reports the outage once, keeps going, and pushes events again once Redis is back', async () => {
    // AOF on, so the project and its stream survive the crash.
    server = await startRedisServer({ appendOnly: true });
    control = createBatonControl({ url: server.url, prefix: '{hub}', connectTimeoutMs: 300 });
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    const repository = new ProjectRepository({ redis, keys: control.keys });
    const id = `h-${randomHex()}`;
    await control.createProject({ id, goal: 'g\n- a' });

    let lists = 0;
    const counted = spyOnControl(control, 'projectChanges', () => lists++);
    const errors: unknown[] = [];
    hub = createEventHub({
      control: counted,
      pollIntervalMs: 50,
      onError: (error) => errors.push(error),
    });
    const messages: HubMessage[] = [];
    hub.subscribeProject(id, (message) => messages.push(message));
    await waitFor('the first poll', () => messages.some((message) => message.type === 'project'));
    const append = () =>
      repository.appendEvent(id, { v: 1, type: 'custom', at: Date.now(), projectId: id });
    const delivered = (eventId: string) =>
      messages.some((message) => message.type === 'event' && message.entry.id === eventId);

    const before = await append();
    await waitFor('the event before the outage', () => delivered(before));

    await server.kill();
    await waitFor('the outage reported', () => errors.length > 0);
    const listsAtFirstError = lists;
    await waitFor('the loop retrying', () => lists >= listsAtFirstError + 3);
    // Reported once a minute, not at every failed list.
    expect(errors).toHaveLength(1);

    await server.restart();
    const after = await waitFor('an append once Redis is back', () => append());
    await waitFor('the event after the outage', () => delivered(after));
  }, 60_000);
});
