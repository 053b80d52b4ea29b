import { describe, expect, it } from 'vitest';
import { constantTimeEqual, generateToken, tokenWeakness } from './auth.js';

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
