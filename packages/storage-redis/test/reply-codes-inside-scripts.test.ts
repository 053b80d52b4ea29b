import { isStoreError } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { toStoreError } from '../src/internal/status.js';

const SHA = 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db';
const WRONG_KIND = 'Operation against a key holding the wrong kind of value';

/** A reply as a script's `redis.call` error arrives: wrapped before Redis 7, suffixed since. */
const fromScript = {
  '6.2': (reply: string) =>
    new Error(`ERR Error running script (call to f_${SHA}): @user_script:1: ${reply}`),
  '7.x': (reply: string) => new Error(`${reply} script: ${SHA}, on @user_script:1.`),
  plain: (reply: string) => new Error(reply),
};

describe('toStoreError reads the reply code of an error raised inside a script', () => {
  for (const [redis, wrap] of Object.entries(fromScript)) {
    it(`WRONGTYPE (${redis}) is damage: corrupt, not unavailable`, () => {
      const error = toStoreError(wrap(`WRONGTYPE ${WRONG_KIND}`), 'write /notes.md');
      expect(isStoreError(error, 'corrupt'), error.message).toBe(true);
      expect(error.message).toContain('(WRONGTYPE)');
      expect(error.message).not.toMatch(/try again/i);
      expect(error.message).not.toContain(SHA);
    });

    it(`a refusal such as OOM (${redis}) is unavailable and named`, () => {
      const error = toStoreError(
        wrap("OOM command not allowed when used memory > 'maxmemory'."),
        'write /notes.md',
      );
      expect(isStoreError(error, 'unavailable'), error.message).toBe(true);
      expect(error.message).toBe(
        'Redis refused the command (OOM) while trying to write /notes.md; try again later.',
      );
    });
  }

  it('a code inside another word is not that code', () => {
    const error = toStoreError(new Error('ERR unknown command NOTWRONGTYPES'), 'read /a.md');
    expect(isStoreError(error, 'unavailable'), error.message).toBe(true);
    expect(error.message).toBe('Redis is unavailable while trying to read /a.md; try again later.');
  });
});
