import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  };
}

describe('worker logs', () => {
  it('write an error with its stack and its cause chain', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', workerId: 'w', destination });
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    logger.error({ err: new Error('session job failed', { cause }) }, 'job failed');
    const err = lines[0]?.err as { message: string; stack: string; cause?: { stack: string } };
    expect(err.message).toBe('session job failed');
    expect(err.stack).toMatch(/^Error: session job failed\n\s+at /u);
    expect(err.cause?.stack).toMatch(/^Error: connect ECONNREFUSED/u);
  });

  it('redact secrets in messages, fields and errors', () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', workerId: 'w', destination });
    const token = `glpat-${'Ab1'.repeat(8)}`;
    logger.info({ command: `git push https://${token}@gitlab.example/x` }, `pushed with ${token}`);
    logger.error({ err: new Error(`push refused for ${token}`) }, 'push failed');
    const text = JSON.stringify(lines);
    expect(text).not.toContain(token);
    expect(text).toContain('[REDACTED:gitlab_token]');
    expect((lines[1]?.err as { stack: string }).stack).toContain('[REDACTED:gitlab_token]');
  });
});
