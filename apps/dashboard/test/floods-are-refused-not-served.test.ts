/**
 * Work a flood can make the dashboard do is capped and answered at once: heavy requests (branch
 * diffs with their `git fetch`, searches, transcripts) past `maxHeavyRequests` get 503 with
 * `Retry-After` while `/livez` stays answered; one address creating projects past
 * `projectCreationsPerMinute` gets 429 with `Retry-After`; connections past `maxConnections` are
 * closed without being served. The remote of the diff test is a TCP server that accepts and never
 * answers, so the first diff holds its slot for as long as the test needs.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { randomHex, waitFor } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import {
  seedRemoteProject,
  startSilentRemote,
  type SilentRemote,
} from './support/silent-remote.js';

let dashboard: TestDashboard | undefined;
let remote: SilentRemote | undefined;
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await remote?.close();
  remote = undefined;
  await dashboard?.close();
  dashboard = undefined;
});

it('answers heavy requests past the cap with 503 busy and Retry-After, and /livez meanwhile', async () => {
  dashboard = await startTestDashboard({ maxHeavyRequests: 1 });
  remote = await startSilentRemote();
  const first = await seedRemoteProject(dashboard.repository, `flood-${randomHex(3)}`, remote.url);
  const second = await seedRemoteProject(dashboard.repository, `flood-${randomHex(3)}`, remote.url);

  const held = dashboard.request(`/api/projects/${first}/diff`);
  await waitFor('the first diff to hold its fetch open', () => remote!.connections >= 1);
  for (const pathname of [
    `/api/projects/${second}/diff`,
    `/api/projects/${first}/search?q=one`,
    `/api/projects/${first}/transcripts/s1`,
  ]) {
    const busy = await dashboard.request(pathname);
    expect(busy.status, pathname).toBe(503);
    expect(busy.headers.get('retry-after'), pathname).toBe('1');
    expect(((await busy.json()) as { error: { code: string } }).error.code, pathname).toBe('busy');
  }
  const livez = await dashboard.request('/livez');
  expect(livez.status).toBe(200);

  remote.release();
  expect((await held).status).toBe(503);
  // The slot is free again: the next diff runs (and fails on the refusing remote, not on the cap).
  const next = await dashboard.request(`/api/projects/${second}/diff`);
  expect(((await next.json()) as { error: { code: string } }).error.code).toBe('unavailable');
}, 60_000);

it('answers an address creating projects past its rate with 429 and Retry-After', async () => {
  dashboard = await startTestDashboard({ projectCreationsPerMinute: 2 });
  const create = () =>
    dashboard!.request('/api/projects', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: dashboard!.server.url },
      body: JSON.stringify({ id: `rate-${randomHex(3)}`, goal: '- one' }),
    });
  expect((await create()).status).toBe(201);
  expect((await create()).status).toBe(201);
  const refused = await create();
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await refused.json()).toEqual({
    error: {
      code: 'rate_limited',
      message: 'Too many new projects from this address; try again later.',
    },
  });
  // Nothing was stored for the refused one.
  expect((await dashboard.control.listProjects()).length).toBe(2);
  // Reading is not limited.
  expect((await dashboard.request('/api/projects')).status).toBe(200);
}, 60_000);

/** Opens a raw connection, sends one request and resolves with what came back before it closed or answered. */
function rawRequest(url: string, keepOpen: boolean): Promise<{ socket: Socket; answer: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('connect', () =>
      socket.write(
        `GET /livez HTTP/1.1\r\nHost: ${hostname}:${port}\r\nConnection: ${keepOpen ? 'keep-alive' : 'close'}\r\n\r\n`,
      ),
    );
    socket.on('data', (chunk: string) => {
      answer += chunk;
      if (answer.includes('\r\n\r\n') && answer.includes('"ok"')) resolve({ socket, answer });
    });
    socket.on('error', () => resolve({ socket, answer }));
    socket.on('close', () => resolve({ socket, answer }));
    socket.setTimeout(20_000, () => reject(new Error('no answer and no close within 20 s')));
  });
}

it('closes connections past maxConnections without serving them', async () => {
  dashboard = await startTestDashboard({ maxConnections: 3 });
  const url = dashboard.server.url;
  for (let index = 0; index < 3; index++) {
    const { socket, answer } = await rawRequest(url, true);
    sockets.push(socket);
    expect(answer).toMatch(/^HTTP\/1\.1 200/u);
  }
  const fourth = await rawRequest(url, false);
  expect(fourth.answer).toBe('');
  expect(fourth.socket.destroyed).toBe(true);
  // One of the three goes away: a new connection is served again.
  sockets.shift()?.destroy();
  await waitFor('a connection to be served again', async () => {
    const { socket, answer } = await rawRequest(url, false);
    socket.destroy();
    return answer.startsWith('HTTP/1.1 200');
  });
}, 60_000);
