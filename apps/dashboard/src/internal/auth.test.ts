import { describe, expect, it } from 'vitest';
import { constantTimeEqual, generateToken, tokenWeakness } from './auth.js';
import { createLoginThrottle } from './login-throttle.js';

describe('token comparison', () => {
  it('compares tokens of any length without throwing', () => {
    expect(constantTimeEqual('same-token-123456', 'same-token-123456')).toBe(true);
    expect(constantTimeEqual('same-token-123456', 'same-token-12345')).toBe(false);
    expect(constantTimeEqual('', 'x'.repeat(10_000))).toBe(false);
  });
});

describe('weak tokens are refused', () => {
  it.each([
    ['short', 'shorter than 16'],
    ['aaaaaaaaaaaaaaaa', 'fewer than 8 different'],
    ['abababababababababab', 'fewer than 8 different'],
    ['abcdefghijklmnop', 'consecutive'],
    ['1234567890123456', 'consecutive'],
    ['zyxwvutsrqponmlk', 'consecutive'],
  ])('%s', (token, reason) => {
    expect(tokenWeakness(token)).toContain(reason);
  });

  it('accepts the generated suggestion and a passphrase', () => {
    for (let index = 0; index < 200; index++) expect(tokenWeakness(generateToken())).toBeNull();
    expect(tokenWeakness('correct-horse-battery-staple-42')).toBeNull();
  });
});

describe('failed attempts back off per address', () => {
  it('lets five failures through, then doubles the lockout up to the cap', () => {
    let now = 0;
    const throttle = createLoginThrottle({ baseDelayMs: 1_000, maxDelayMs: 8_000, now: () => now });
    const locks = [...Array(9).keys()].map(() => throttle.fail('10.0.0.1').lockedForMs);
    expect(locks).toEqual([0, 0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000]);
    expect(throttle.retryAfterMs('10.0.0.1')).toBe(8_000);
    expect(throttle.retryAfterMs('10.0.0.2')).toBe(0);
    now += 8_000;
    expect(throttle.retryAfterMs('10.0.0.1')).toBe(0);
    throttle.succeed('10.0.0.1');
    expect(throttle.fail('10.0.0.1').lockedForMs).toBe(0);
  });

  it('keeps at most maxAddresses records', () => {
    const throttle = createLoginThrottle({ freeFailures: 0, maxAddresses: 3 });
    for (const address of ['a', 'b', 'c', 'd']) throttle.fail(address);
    expect(throttle.retryAfterMs('a')).toBe(0);
    expect(throttle.retryAfterMs('d')).toBeGreaterThan(0);
  });
});
