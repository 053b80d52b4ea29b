import { describe, expect, it } from 'vitest';
import { constantTimeEqual, sessionCookieValue } from './auth.js';

describe('token comparison', () => {
  it('compares tokens of any length without throwing', () => {
    expect(constantTimeEqual('same-token-123456', 'same-token-123456')).toBe(true);
    expect(constantTimeEqual('same-token-123456', 'same-token-12345')).toBe(false);
    expect(constantTimeEqual('', 'x'.repeat(10_000))).toBe(false);
  });

  it('puts an HMAC of the token in the cookie, never the token', () => {
    const value = sessionCookieValue('correct-horse-battery-staple');
    expect(value).not.toContain('correct-horse');
    expect(value).toBe(sessionCookieValue('correct-horse-battery-staple'));
    expect(value).not.toBe(sessionCookieValue('correct-horse-battery-stapl3'));
  });
});
