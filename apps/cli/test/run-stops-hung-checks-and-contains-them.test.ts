import { readFile, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

// Sessions with real git and real sandboxed checks that run into their timeout: slow.
vi.setConfig({ testTimeout: 600_000 });

const world = cliWorld();

const env = () => cliEnv(world.home);

/** Command lines of the host's processes that contain `needle`. */
function processesWith(needle: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
        return command.includes(needle) ? [command] : [];
      } catch {
        return [];
      }
    });
}

describe('baton run stops a hung check and contains what a check does', () => {
  it('--check-timeout kills a check that hangs (it counts as failed); the check cannot touch or read outside the workspace', async () => {
    const canary = path.join(world.dir, 'canary.txt');
    const secret = path.join(world.dir, 'secret.txt');
    await writeFile(canary, 'untouched\n');
    await writeFile(secret, 'SECRET-CANARY-6d1f\n');
    // The project's default check attacks the host's files, then hangs.
    const sleep = 'sleep 29.4713';
    const check = `echo pwned > ${canary}; rm -f ${canary}; cat ${secret}; ls ${world.dir}; ${sleep}`;
    const goal = 'Todo app.\n- Add a todo [sim:no-check]';
    const result = await runCli(
      [
        'run',
        '--goal',
        goal,
        '--project',
        'hung',
        '--check',
        check,
        '--check-timeout',
        '2',
        '--regression-budget',
        '5',
        '--sessions',
        '2',
      ],
      { cwd: world.dir, env: env() },
    );
    expect(result.stderr).toBe('');

    const json = await runCli(['checks', 'hung', '--local', '--json'], {
      cwd: world.dir,
      env: env(),
    });
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      verification: unknown;
      features: Array<{
        id: string;
        state: string;
        evidence: {
          passed: boolean;
          stopped?: string;
          durationMs: number;
          outputTail: string;
        } | null;
      }>;
    };
    expect(report.verification).toEqual({
      check,
      checkTimeoutSeconds: 2,
      regressionBudgetSeconds: 5,
    });
    const f1 = report.features[0];
    // Killed at its 2 s timeout (not the default 120 s), counted as failed: the flip was refused.
    expect(f1).toMatchObject({
      id: 'F1',
      state: 'refused',
      evidence: { passed: false, stopped: 'timeout' },
    });
    expect(f1?.evidence?.durationMs).toBeGreaterThanOrEqual(2_000);
    expect(f1?.evidence?.durationMs).toBeLessThan(30_000);
    // Contained: the host's files are untouched and unread; nothing of the check outlived it.
    expect(await readFile(canary, 'utf8')).toBe('untouched\n');
    expect(f1?.evidence?.outputTail).not.toContain('SECRET-CANARY');
    expect(f1?.evidence?.outputTail).not.toContain('canary.txt');
    expect(processesWith(sleep)).toEqual([]);
    const status = await runCli(['checks', 'hung', '--local'], { cwd: world.dir, env: env() });
    expect(status.stdout).toContain('checks stopped after 2 s; re-runs 5 s per session');
    expect(status.stdout).toMatch(/^F1\s+refused\s+timed out/m);

    for (const [flag, value, message] of [
      ['--check-timeout', '0', 'must be at least 1 second'],
      ['--regression-budget', '1.5', 'must be a whole number of seconds'],
      ['--check-timeout', '3601', 'must be at most 3600 seconds'],
    ] as const) {
      const bad = await runCli(['run', '--goal', goal, '--project', 'bad', flag, value], {
        cwd: world.dir,
        env: env(),
      });
      expect(bad.code, `${flag} ${value}`).toBe(2);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toContain(message);
    }
  });
});
