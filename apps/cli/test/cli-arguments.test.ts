import { EXIT_CODE_POINTER } from '../src/exit-codes.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, runCli, tempDir } from './helpers.js';

// One directory for the file: no test here writes anything (a mistake must stop before any work).
let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(async () => {
  await cleanup();
});

describe('every command has --help', () => {
  it.concurrent.each([[['--help']], [['run', '--help']], [['sim', '--help']]])(
    'baton %s',
    async (args) => {
      const result = await runCli(args, { cwd: dir, env: cliEnv(dir) });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: baton/);
      if (args[0] === 'run') expect(result.stdout).toContain(EXIT_CODE_POINTER);
    },
  );
});

describe('argument mistakes: one clear line and exit code 2', () => {
  it.concurrent.each([
    [['run'], 'give --goal TEXT or --goal-file FILE'],
    [
      ['run', '--goal', 'x', '--sessions', '0'],
      "option '--sessions <n>' argument '0' is invalid. expected a whole number",
    ],
    [
      ['run', '--goal', 'x', '--preset', 'turbo'],
      'Allowed choices are coding, search-heavy, long-horizon, off',
    ],
    // Ids and limits follow @baton/projects' rules (the project schema's own words).
    [
      ['run', '--goal', 'x', '--budget-usd', '-1'],
      "option '--budget-usd <usd>' argument '-1' is invalid. must be greater than 0.",
    ],
    [['run', '--goal', 'x', '--max-turns', '2.5'], 'must be a whole number.'],
    [['run', '--goal', 'x', '--stall-after', 'many'], 'must be a number.'],
    [['run', '--goal', 'x', '--model', 'two words'], 'must be a model id'],
    // The project options of both verbs: one parser each (project-options.ts).
    [['run', '--goal', 'x', '--max-sessions', '0'], 'must be greater than 0.'],
    [['run', '--goal', 'x', '--max-tokens', '1e10'], 'must be at most 1000000000.'],
    [['run', '--goal', 'x', '--fallback-model', 'a b'], 'must be a model id'],
    [['enqueue', '--project', 'p', '--goal', 'x', '--max-turns', '0'], 'must be greater than 0.'],
    [
      ['enqueue', '--project', 'a b', '--goal', 'x'],
      "option '--project <id>' argument 'a b' is invalid",
    ],
    [['enqueue', '--project', 'p', '--goal', 'x', '--budget-usd', '0'], 'must be greater than 0.'],
    [
      ['enqueue', '--project', 'p', '--goal', 'x', '--budget-usd', '2000000'],
      'must be at most 1000000.',
    ],
    [
      ['enqueue', '--project', 'p', '--goal', 'x', '--max-sessions', '0'],
      'must be greater than 0.',
    ],
    [
      ['enqueue', '--project', 'p', '--goal', 'x', '--max-tokens', '1e10'],
      'must be at most 1000000000.',
    ],
    [['enqueue', '--project', 'p', '--goal', 'x', '--stall-after', ''], 'must be a number.'],
    [['enqueue', '--project', 'p', '--goal', 'x', '--model', 'a;b'], 'must be a model id'],
    [['enqueue', '--project', 'p', '--goal', 'x', '--fallback-model', ''], 'must be a model id'],
    [['logs', 'a.b'], "value 'a.b' is invalid for argument 'id'. a project id must be"],
    [['run', '--goal', 'x', '--goal-file', 'g.md'], 'use either --goal or --goal-file, not both'],
    [['run', '--goal-file', 'missing.md'], 'cannot read --goal-file missing.md: no such file'],
    [
      ['run', '--project', '../escape', '--goal', 'x'],
      "option '--project <id>' argument '../escape' is invalid",
    ],
    [['run', '--goal', 'x', '--frobnicate'], "unknown option '--frobnicate'"],
    [['launch'], "unknown command 'launch'"],
    [['sim', '--port', '70000'], 'expected a port from 0 to 65535'],
  ])('baton %s', async (args, message) => {
    const result = await runCli(args, { cwd: dir, env: cliEnv(dir) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stdout).toBe('');
  });
});
