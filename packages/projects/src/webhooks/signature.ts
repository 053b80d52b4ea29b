import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying `sha256=<hex HMAC-SHA256 of the raw body>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-baton-signature';

/** `sha256=<hex>`: HMAC-SHA256 of exactly the bytes sent as the body, keyed with the secret. */
export function signWebhookBody(body: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * What a receiver does: recompute the signature over the raw body (before any JSON parsing) and
 * compare in constant time. False for a missing, malformed or wrong header.
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
