import { verifyWebhookSignature, type WebhookDeliveryRecord } from '@baton/projects';
import {
  startWebhookReceiver,
  waitFor,
  type ReceivedRequest,
  type WebhookReceiver,
} from '@baton/test-support';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliProcess } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

// Standard Webhooks' serialised form: whsec_ and the base64 of a 32-byte key.
const SECRET = `whsec_${Buffer.alloc(32, 'baton-cli-webhooks').toString('base64')}`;

const world = redisCliWorld();

let receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  receivers = [];
});

async function receiver(options: { failFirst?: number; status?: number }) {
  const started = await startWebhookReceiver(options);
  receivers.push(started);
  return started;
}

async function startWorker(urls: string[]): Promise<CliProcess> {
  const worker = world.start(['worker', '--port', '0'], {
    BATON_MODEL: 'sim',
    BATON_CHAIN_DELAY_MS: '0',
    BATON_WEBHOOK_URL: urls.join(','),
    BATON_WEBHOOK_SECRET: SECRET,
    BATON_WEBHOOK_ATTEMPTS: '3',
    BATON_WEBHOOK_BACKOFF_MS: '50',
  });
  await worker.waitForOutput('"worker started"');
  return worker;
}

function deliveries(id: string, count: number): Promise<WebhookDeliveryRecord[]> {
  return waitFor(
    `${count} webhook deliveries of ${id}`,
    async () => {
      const records = await world.redis.control.listWebhookDeliveries(id);
      return records.length >= count ? records : null;
    },
    40_000,
  );
}

function expectSigned(request: ReceivedRequest): Record<string, unknown> {
  // The stock Standard Webhooks verifier, used as a receiver would (it throws on a bad signature).
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
  );
  expect(new Webhook(SECRET).verify(request.rawBody, headers)).toBeTruthy();
  // The deprecated header, still sent for one release.
  expect(
    verifyWebhookSignature(
      request.rawBody,
      SECRET,
      request.headers['x-baton-signature'] as string | undefined,
    ),
  ).toBe(true);
  return JSON.parse(request.rawBody) as Record<string, unknown>;
}

describe('webhooks from `baton worker` (BATON_WEBHOOK_URL, BATON_WEBHOOK_SECRET)', () => {
  it('a completed project is POSTed signed to every receiver, retried through two failures; `baton status` shows the outcomes', async () => {
    const { redis } = world;
    const flaky = await receiver({ failFirst: 2 });
    const down = await receiver({ status: 503 });
    await startWorker([flaky.url, down.url]);
    const id = redis.projectId('wh');
    const enqueued = await world.cli(['enqueue', '--project', id, '--goal', 'Greet\n- hello']);
    expect(enqueued.code).toBe(0);

    const records = await deliveries(id, 2);
    const project = await redis.control.getProject(id);
    expect(project?.status).toBe('completed');

    // Three attempts each: the flaky one succeeds on the third, the other fails all three.
    expect(flaky.requests.map((request) => request.answered)).toEqual([500, 500, 204]);
    expect(down.requests.map((request) => request.answered)).toEqual([503, 503, 503]);
    const bodies = [...flaky.requests, ...down.requests].map(expectSigned);
    expect(new Set(flaky.requests.map((request) => request.rawBody)).size).toBe(1);
    expect(bodies[0]).toMatchObject({
      type: 'project.completed',
      project: {
        id,
        status: 'completed',
        features: { passing: 1, total: 1 },
        tokens: { input: project?.counters.inputTokens, output: project?.counters.outputTokens },
      },
    });
    expect(flaky.requests[0]?.headers['x-baton-event']).toBe('project.completed');

    const byTarget = new Map(records.map((record) => [record.target, record]));
    expect(byTarget.get(new URL(flaky.url).origin)).toMatchObject({ ok: true, attempts: 3 });
    expect(byTarget.get(new URL(down.url).origin)).toMatchObject({
      ok: false,
      attempts: 3,
      status: 503,
    });

    const status = await world.cli(['status', id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^webhooks\s+1 delivered, 1 failed/m);
    expect(status.stdout).toMatch(
      /project\.completed -> http:\/\/127\.0\.0\.1:\d+ ok \(3 attempts\)/,
    );
    expect(status.stdout).toMatch(/FAILED after 3 attempts: receiver answered HTTP 503/);
    // The path of a webhook URL often holds a token: it is never shown.
    expect(status.stdout).not.toContain('secret-path-token');
    const json = await world.cli(['status', id, '--json']);
    const parsed = JSON.parse(json.stdout) as { webhooks: WebhookDeliveryRecord[] };
    expect(parsed.webhooks.map((record) => record.ok).sort()).toEqual([false, true]);

    const events = await redis.control.readEvents(id, { count: 10_000 });
    const delivered = events.filter((entry) => entry.event.type === 'webhook-delivery');
    expect(delivered).toHaveLength(2);
  });

  it('a budget pause is project.budget_reached, and `baton cancel` of a queued project is project.cancelled', async () => {
    const { redis } = world;
    const hook = await receiver({});
    await startWorker([hook.url]);
    const paused = redis.projectId('whb');
    await world.cli([
      'enqueue',
      '--project',
      paused,
      '--goal',
      'Greet\n- hello\n- bye',
      '--max-sessions',
      '1',
    ]);
    await deliveries(paused, 1);
    expect(expectSigned(hook.requests[0]!)).toMatchObject({
      type: 'project.budget_reached',
      project: { id: paused, status: 'paused', reason: 'budget: 1 of 1 sessions used' },
    });

    // Created but never queued: only the CLI's cancel touches it, and a worker still delivers.
    const cancelled = redis.projectId('whc');
    await redis.control.createProject({ id: cancelled, goal: '- a' });
    const cancel = await world.cli(['cancel', cancelled]);
    expect(cancel.code).toBe(0);
    await deliveries(cancelled, 1);
    const body = expectSigned(hook.requests[1]!);
    expect(body).toMatchObject({
      type: 'project.cancelled',
      project: { id: cancelled, status: 'cancelled', reason: 'cancelled by user' },
    });
  });

  it('refuses a webhook URL without a secret, and a URL that is not http(s), in one line each', async () => {
    const noSecret = await world.cli(['worker'], {
      BATON_MODEL: 'sim',
      BATON_WEBHOOK_URL: 'http://127.0.0.1:9/x',
    });
    expect(noSecret.code).toBe(2);
    expect(oneLine(noSecret.stderr)).toContain('BATON_WEBHOOK_SECRET is not set');
    const notHttp = await world.cli(['worker'], {
      BATON_MODEL: 'sim',
      BATON_WEBHOOK_URL: 'http://127.0.0.1:9/a, ftp://host/token-123',
      BATON_WEBHOOK_SECRET: 's',
    });
    expect(notHttp.code).toBe(2);
    const line = oneLine(notHttp.stderr);
    expect(line).toContain('BATON_WEBHOOK_URL entry 2 is not an http:// or https:// URL');
    expect(line).not.toContain('token-123');
  });
});
