import { beforeEach, expect, it } from 'vitest';
import {
  WEBHOOK_OUTPUT_CHARS,
  notifyFeatureRegressed,
  notifyStatusChange,
  verifyWebhookSignature,
  type WebhookDeliveryRecord,
  type WebhookPayload,
} from '../src/index.js';
import { useWebhookHarness } from './support/webhook-harness.js';

const SECRET = 'whsec-test';
const harness = useWebhookHarness('wh');
let records: WebhookDeliveryRecord[];
let recordWaiters: Array<() => void>;

beforeEach(() => {
  records = [];
  recordWaiters = [];
});

function startWorker(urls: string[], attempts = 3): void {
  harness.startWorker({
    urls,
    secret: SECRET,
    attempts,
    backoffMs: 20,
    onDelivery(record) {
      records.push(record);
      for (const wake of recordWaiters.splice(0)) wake();
    },
  });
}

async function recordsFor(count: number): Promise<WebhookDeliveryRecord[]> {
  while (records.length < count) await new Promise<void>((resolve) => recordWaiters.push(resolve));
  return records;
}

const receiver = (options: { failFirst?: number; status?: number } = {}) =>
  harness.receiver(options);

it('posts a signed feature.regressed with the failed check, its output cut to its last characters', async () => {
  const target = await receiver();
  startWorker([target.url]);
  await notifyFeatureRegressed(harness.queue, {
    projectId: 'p1',
    at: Date.parse('2026-12-01T12:00:00Z'),
    feature: {
      id: 'F2',
      check: 'sh features/f2.sh',
      exitCode: 1,
      commit: 'c0ffee',
      output: `${'x'.repeat(2_000)}\nF2 broken`,
    },
  });
  const [request] = await target.received(1);
  expect(
    verifyWebhookSignature(
      request!.rawBody,
      SECRET,
      request!.headers['x-baton-signature'] as string,
    ),
  ).toBe(true);
  expect(request!.headers['x-baton-event']).toBe('feature.regressed');
  const payload = JSON.parse(request!.rawBody) as WebhookPayload;
  expect(payload).toMatchObject({
    type: 'feature.regressed',
    project: { id: 'p1', status: 'running', reason: 'F2 regressed: its check failed on a re-run' },
    feature: { id: 'F2', check: 'sh features/f2.sh', exitCode: 1, commit: 'c0ffee' },
  });
  expect(payload.feature?.output).toHaveLength(WEBHOOK_OUTPUT_CHARS);
  expect(payload.feature?.output.endsWith('\nF2 broken')).toBe(true);
  expect((await recordsFor(1))[0]).toMatchObject({ ok: true, type: 'feature.regressed' });
});

it('posts one signed body to every URL on completion', async () => {
  const [first, second] = [await receiver(), await receiver()];
  startWorker([first.url, second.url]);
  const type = await notifyStatusChange(harness.queue, {
    projectId: 'p1',
    to: 'completed',
    reason: 'all 3 features pass',
    at: Date.parse('2026-12-01T12:00:00Z'),
  });
  expect(type).toBe('project.completed');
  const [a] = await first.received(1);
  const [b] = await second.received(1);
  for (const request of [a!, b!]) {
    expect(
      verifyWebhookSignature(
        request.rawBody,
        SECRET,
        request.headers['x-baton-signature'] as string,
      ),
    ).toBe(true);
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-baton-event']).toBe('project.completed');
  }
  expect(a!.rawBody).toBe(b!.rawBody);
  const payload = JSON.parse(a!.rawBody) as WebhookPayload;
  expect(payload).toMatchObject({
    type: 'project.completed',
    at: '2026-12-01T12:00:00.000Z',
    project: {
      id: 'p1',
      status: 'completed',
      reason: 'all 3 features pass',
      features: { passing: 3, total: 3, verified: 2, claimed: 1, regressed: 0 },
      tokens: { input: 1200, output: 300, total: 1500 },
      usd: 0.0125,
    },
  });
  const done = await recordsFor(2);
  expect(done.map((record) => [record.ok, record.attempts])).toEqual([
    [true, 1],
    [true, 1],
  ]);
  // Records name the receiver's origin only: its path holds a token.
  expect(JSON.stringify(done)).not.toContain('secret-path-token');
});

it('a receiver that fails twice gets the same signed body a third time, after backoff', async () => {
  const flaky = await receiver({ failFirst: 2 });
  startWorker([flaky.url], 5);
  await notifyStatusChange(harness.queue, {
    projectId: 'p1',
    to: 'failed',
    reason: '3 failed sessions',
    at: 1,
  });
  const requests = await flaky.received(3);
  expect(requests.map((request) => request.answered)).toEqual([500, 500, 204]);
  expect(new Set(requests.map((request) => request.rawBody)).size).toBe(1);
  expect(new Set(requests.map((request) => request.headers['x-baton-delivery'])).size).toBe(1);
  const [record] = await recordsFor(1);
  expect(record).toMatchObject({ ok: true, attempts: 3, status: 204, type: 'project.failed' });
});

it('a receiver that never accepts is recorded as failed after the last attempt', async () => {
  const down = await receiver({ status: 503 });
  startWorker([down.url], 2);
  await notifyStatusChange(harness.queue, {
    projectId: 'p1',
    to: 'paused',
    reason: 'budget: 3 of 3 sessions used',
    at: 2,
    budgetReached: true,
  });
  const [record] = await recordsFor(1);
  expect(record).toMatchObject({
    ok: false,
    attempts: 2,
    status: 503,
    type: 'project.budget_reached',
    error: 'receiver answered HTTP 503',
  });
  expect(down.requests).toHaveLength(2);
});

it('running and queued are not notified', async () => {
  expect(
    await notifyStatusChange(harness.queue, {
      projectId: 'p1',
      to: 'running',
      reason: null,
      at: 3,
    }),
  ).toBeNull();
  expect(await harness.queue.getJobCounts()).toMatchObject({ waiting: 0, delayed: 0 });
});
