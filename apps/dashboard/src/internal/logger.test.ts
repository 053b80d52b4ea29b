import { describe, expect, it } from 'vitest';
import { createDashboardLogger } from './logger.js';

describe('dashboard logs', () => {
  it('write an error with its stack and cause chain, redacted, and refuse an unknown LOG_LEVEL', () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createDashboardLogger({
      level: 'info',
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    const token = `hf_${'Zz9'.repeat(12)}`;
    const cause = Object.assign(new Error(`redis said no to ${token}`), { code: 'ECONNRESET' });
    logger.error({ err: new Error('poll failed', { cause }) }, 'unexpected error');
    const err = lines[0]?.err as {
      message: string;
      stack: string;
      cause: { message: string; code: string; stack: string };
    };
    expect(err.stack).toMatch(/^Error: poll failed\n\s+at /u);
    expect(err.cause).toMatchObject({
      message: 'redis said no to [REDACTED:huggingface_token]',
      code: 'ECONNRESET',
    });
    expect(err.cause.stack).toContain('[REDACTED:huggingface_token]');
    expect(JSON.stringify(lines)).not.toContain(token);
    expect(() => createDashboardLogger({ level: 'verbose' })).toThrow(
      /LOG_LEVEL must be one of .*got "verbose"/u,
    );
  });
});
