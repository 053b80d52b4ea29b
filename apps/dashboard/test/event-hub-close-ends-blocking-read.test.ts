import { afterEach, expect, it } from 'vitest';
import { deletePrefix, randomHex, REDIS_URL, waitFor } from '@baton/test-support';
import { createBatonControl, type BatonControl } from '@baton/projects';
import { createEventHub, type HubMessage } from '../src/internal/event-hub.js';
import { spyOnControl } from './support/spy-control.js';

let control: BatonControl | undefined;
let prefix = '';

afterEach(async () => {
  await control?.close();
  await deletePrefix(prefix);
});

it('closing the hub ends its pending blocking read at once', async () => {
  prefix = `{bh-${randomHex()}}`;
  control = createBatonControl({ url: REDIS_URL, prefix });
  const id = `c-${randomHex()}`;
  await control.createProject({ id, goal: 'g\n- a' });
  let waits = 0;
  const hub = createEventHub({
    control: spyOnControl(control, 'waitForEvents', () => waits++),
    // The blocking read lasts until the next list, 60 s away.
    pollIntervalMs: 60_000,
  });
  const messages: HubMessage[] = [];
  hub.subscribeProject(id, (message) => messages.push(message));
  await waitFor('the first list', () => messages.some((message) => message.type === 'project'));
  await waitFor('the blocking read', () => waits > 0);
  const closing = Date.now();
  await hub.close();
  expect(Date.now() - closing).toBeLessThan(2_000);
});
