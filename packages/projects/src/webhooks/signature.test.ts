import { expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from './signature.js';

it('signs with HMAC-SHA256 of the raw body, hex, prefixed sha256=', () => {
  // RFC 4231-style known vector (the classic "quick brown fox" HMAC-SHA256 with key "key").
  expect(signWebhookBody('The quick brown fox jumps over the lazy dog', 'key')).toBe(
    'sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
  );
});

it('verification fails for another body, another secret, or a malformed header', () => {
  const body = '{"type":"project.completed"}';
  const header = signWebhookBody(body, 'secret');
  expect(verifyWebhookSignature(body, 'secret', header)).toBe(true);
  expect(verifyWebhookSignature(`${body} `, 'secret', header)).toBe(false);
  expect(verifyWebhookSignature(body, 'other', header)).toBe(false);
  expect(verifyWebhookSignature(body, 'secret', header.toUpperCase())).toBe(false);
  expect(verifyWebhookSignature(body, 'secret', undefined)).toBe(false);
});
