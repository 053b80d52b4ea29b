import { createHmac, randomBytes } from 'node:crypto';
import { type ReceivedRequest } from '@baton/test-support';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  createWebhookSigner,
  notifyStatusChange,
  verifyWebhookSignature,
  webhookSigningKey,
} from '../src/index.js';
import { useWebhookHarness } from './support/webhook-harness.js';

/**
 * Deliveries follow the Standard Webhooks specification, so the stock verifier (the
 * `standardwebhooks` npm package, used here exactly as a receiver would) accepts them and refuses a
 * captured delivery replayed outside its 5-minute tolerance.
 */

const SPEC_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const PLAIN_SECRET = 'a plain secret, as Baton took before';
const harness = useWebhookHarness('whs');

afterEach(() => {
  vi.useRealTimers();
});

async function deliverOne(secret: string, failFirst = 0): Promise<ReceivedRequest[]> {
  const receiver = await harness.receiver({ failFirst });
  harness.startWorker({
    urls: [receiver.url],
    secret,
    attempts: failFirst + 1,
    backoffMs: 1000,
  });
  await notifyStatusChange(harness.queue, {
    projectId: 'p1',
    to: 'completed',
    reason: 'all 3 features pass',
    at: Date.parse('2026-12-01T12:00:00Z'),
  });
  return receiver.received(failFirst + 1);
}

/** The headers as a receiver hands them to the verifier (Node lower-cases names). */
function headersOf(request: ReceivedRequest): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
  );
}

describe('webhooks follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)', () => {
  it('the stock verifier accepts a delivery signed with a whsec_ secret, given the secret as is', async () => {
    const [request] = await deliverOne(SPEC_SECRET);
    const headers = headersOf(request!);
    expect(headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    const sentAt = Number(headers['webhook-timestamp']);
    expect(Math.abs(sentAt - Date.now() / 1000)).toBeLessThan(60);
    const payload = new Webhook(SPEC_SECRET).verify(request!.rawBody, headers);
    expect(payload).toMatchObject({ type: 'project.completed', project: { id: 'p1' } });
  });

  it('the signature is HMAC-SHA256 over "{id}.{timestamp}.{body}" keyed with the base64-decoded secret', async () => {
    const [request] = await deliverOne(SPEC_SECRET);
    const headers = headersOf(request!);
    // Computed here with node:crypto alone, independently of the library Baton signs with.
    const key = Buffer.from(SPEC_SECRET.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key)
      .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${request!.rawBody}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });

  it('a captured delivery replayed after the 5-minute tolerance is refused by the stock verifier', async () => {
    const [request] = await deliverOne(SPEC_SECRET);
    const headers = headersOf(request!);
    const verifier = new Webhook(SPEC_SECRET);
    expect(() => verifier.verify(request!.rawBody, headers)).not.toThrow();
    // The same bytes and headers, presented six minutes later.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime((Number(headers['webhook-timestamp']) + 6 * 60) * 1000);
    expect(() => verifier.verify(request!.rawBody, headers)).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(request!.rawBody, headers)).toThrow('Message timestamp too old');
    // Nor can a replayer refresh the timestamp: the signature covers it.
    const refreshed = { ...headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect(() => verifier.verify(request!.rawBody, refreshed)).toThrow('No matching signature');
  });

  it('a tampered body or another secret is refused', async () => {
    const [request] = await deliverOne(SPEC_SECRET);
    const headers = headersOf(request!);
    const verifier = new Webhook(SPEC_SECRET);
    expect(() => verifier.verify(request!.rawBody.replace('p1', 'p2'), headers)).toThrow(
      'No matching signature',
    );
    const other = new Webhook(`whsec_${randomBytes(32).toString('base64')}`);
    expect(() => other.verify(request!.rawBody, headers)).toThrow('No matching signature');
  });

  it('a retry keeps its webhook-id (the idempotency key) and is signed afresh', async () => {
    const requests = await deliverOne(SPEC_SECRET, 1);
    const [first, second] = requests.map(headersOf);
    expect(first!['webhook-id']).toBe(second!['webhook-id']);
    // The retry came at least the 1 s backoff later: its own timestamp, its own signature.
    expect(Number(second!['webhook-timestamp'])).toBeGreaterThan(
      Number(first!['webhook-timestamp']),
    );
    expect(second!['webhook-signature']).not.toBe(first!['webhook-signature']);
    const verifier = new Webhook(SPEC_SECRET);
    for (const request of requests)
      expect(() => verifier.verify(request.rawBody, headersOf(request))).not.toThrow();
  });

  it('a plain secret keys the HMAC with its UTF-8 bytes (stock verifier: format raw); the old x-baton-signature is still sent', async () => {
    const [request] = await deliverOne(PLAIN_SECRET);
    const headers = headersOf(request!);
    const payload = new Webhook(Buffer.from(PLAIN_SECRET, 'utf8'), { format: 'raw' }).verify(
      request!.rawBody,
      headers,
    );
    expect(payload).toMatchObject({ type: 'project.completed' });
    // Kept for one release for receivers written against it.
    expect(
      verifyWebhookSignature(request!.rawBody, PLAIN_SECRET, headers['x-baton-signature']),
    ).toBe(true);
  });

  it('a malformed whsec_ secret is refused with a line saying how to make one', () => {
    expect(() => webhookSigningKey('whsec_not base64!')).toThrow(
      /not base64.*openssl rand -base64 32/,
    );
    expect(() => webhookSigningKey(`whsec_${randomBytes(16).toString('base64')}`)).toThrow(
      /16 bytes; Standard Webhooks asks for 24 to 64/,
    );
    expect(() => createWebhookSigner('')).toThrow('the webhook secret is empty');
    expect(webhookSigningKey(SPEC_SECRET)).toHaveLength(32);
  });
});
