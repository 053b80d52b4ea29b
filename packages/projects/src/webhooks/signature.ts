import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ProjectError } from '../errors.js';

/**
 * Deliveries are signed to the Standard Webhooks specification (standardwebhooks.com): three
 * headers, and `webhook-signature: v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`,
 * so a receiver verifies with a stock library (`new Webhook(secret).verify(body, headers)` from the
 * `standardwebhooks` npm package) and a captured delivery replayed outside its tolerance (5 minutes)
 * is refused.
 */
export const STANDARD_WEBHOOK_HEADERS = {
  /** Stable across every retry of one notification to one receiver: the idempotency key. */
  id: 'webhook-id',
  /** Unix seconds of this attempt (a retry carries a new one). */
  timestamp: 'webhook-timestamp',
  /** `v1,<base64>`. */
  signature: 'webhook-signature',
} as const;

/**
 * The older GitHub-style header, `sha256=<hex HMAC-SHA256 of the raw body>`, keyed with the secret
 * string as given. Still sent for one release so receivers written against it keep working; it
 * has no timestamp, so it does not stop a replay. Deprecated: verify the Standard Webhooks headers.
 */
export const WEBHOOK_SIGNATURE_HEADER = 'x-baton-signature';

/** The prefix the specification gives a serialised symmetric secret: `whsec_<base64 of the key>`. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key a `BATON_WEBHOOK_SECRET` stands for. A `whsec_<base64>` secret (the specification's
 * form, what `new Webhook(secret)` takes as is) is the base64-decoded key, 24 to 64 bytes. Any
 * other secret (as Baton took before) is the key as its UTF-8 bytes; a receiver then verifies with
 * `new Webhook(Buffer.from(secret), { format: 'raw' })`.
 */
export function webhookSigningKey(secret: string): Uint8Array {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    if (secret === '') throw new ProjectError('invalid_config', 'the webhook secret is empty');
    return Buffer.from(secret, 'utf8');
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const key = Buffer.from(encoded, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/u.test(encoded) || encoded.length % 4 !== 0) {
    throw new ProjectError(
      'invalid_config',
      'the webhook secret starts with whsec_ but the rest is not base64 (make one with: echo "whsec_$(openssl rand -base64 32)")',
    );
  }
  if (key.length < 24 || key.length > 64) {
    throw new ProjectError(
      'invalid_config',
      `the webhook secret's key is ${key.length} bytes; Standard Webhooks asks for 24 to 64 (make one with: echo "whsec_$(openssl rand -base64 32)")`,
    );
  }
  return key;
}

/**
 * `webhook-id` for one notification: derived from Baton's notification id (which holds the
 * event type's dots), because the specification forbids `.` in the id it signs.
 */
export function webhookMessageId(notificationId: string): string {
  return `msg_${createHash('sha256').update(notificationId).digest('hex').slice(0, 32)}`;
}

/** Signs one delivery attempt: the Standard Webhooks headers plus, for one release, the old one. */
export function createWebhookSigner(
  secret: string,
): (notificationId: string, body: string, now?: Date) => Record<string, string> {
  const standard = new Webhook(webhookSigningKey(secret), { format: 'raw' });
  return (notificationId, body, now = new Date()) => {
    const id = webhookMessageId(notificationId);
    return {
      [STANDARD_WEBHOOK_HEADERS.id]: id,
      [STANDARD_WEBHOOK_HEADERS.timestamp]: String(Math.floor(now.getTime() / 1000)),
      [STANDARD_WEBHOOK_HEADERS.signature]: standard.sign(id, now, body),
      [WEBHOOK_SIGNATURE_HEADER]: signWebhookBody(body, secret),
    };
  };
}

/** `sha256=<hex>` of the deprecated `x-baton-signature`: HMAC-SHA256 of the body, keyed with the secret. */
export function signWebhookBody(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * Checks the deprecated `x-baton-signature` (new receivers use a Standard Webhooks verifier):
 * recompute over the raw body (before any JSON parsing) and compare in constant time. False for a
 * missing, malformed or wrong header.
 */
export function verifyWebhookSignature(
  body: string | Uint8Array,
  secret: string,
  header: string | null | undefined,
): boolean {
  if (typeof header !== 'string' || !/^sha256=[0-9a-f]{64}$/u.test(header)) return false;
  const expected = Buffer.from(signWebhookBody(body, secret));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
