import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

/**
 * A 40-feature project on a model with a small context window: each session works feature after
 * feature (`[sim:keep-going]`) until Baton's context counter says the next request no longer
 * fits, hands off (progress line, checkpoint), and the next session continues. No session fails.
 */

const MODEL = 'sim-small-context';
const WINDOW = 10_000;
const FEATURES = 40;

const world = cliWorld();

interface Line {
  type: string;
  cause?: string;
  contextWindow?: number | null;
  promptTokens?: number | null;
  result?: { outcome: string; stopReason: string; contextFull?: { turn: number } };
  to?: string;
}

describe('baton run on a small context window', () => {
  it('a 40-feature project completes through context hand-offs: every session logged, none failed', async () => {
    const sim = world.closeAfter(await startModelSim({ contextWindow: { [MODEL]: WINDOW } }));
    const goal = path.join(world.dir, 'goal.md');
    const bullets = Array.from({ length: FEATURES }, (_, index) => `- operation ${index + 1}`);
    await writeFile(goal, ['A calculator. [sim:keep-going]', ...bullets].join('\n'));
    const home = world.home;
    const env = cliEnv(home, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url });
    const args = ['run', '--goal-file', goal, '--project', 'calc', '--model', MODEL];
    const run = await runCli([...args, '--sessions', '40', '--json'], { cwd: world.dir, env });
    expect(run.stderr).not.toContain('Failed');
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Line);
    const ends = lines.filter((line) => line.type === 'session-end');
    expect(ends.every((line) => line.result?.outcome !== 'failed')).toBe(true);
    const full = lines.filter((line) => line.type === 'context-full');
    // 40 features cannot fit one context: several sessions handed off on Baton's count, before
    // the API had to refuse a prompt.
    expect(full.length).toBeGreaterThanOrEqual(3);
    for (const line of full) {
      expect(line).toMatchObject({ cause: 'counter', contextWindow: WINDOW });
      expect(line.promptTokens).toBeLessThanOrEqual(WINDOW);
    }
    expect(sim.received.filter((record) => record.status === 400)).toEqual([]);
    const handedOff = ends.filter((line) => line.result?.stopReason === 'context_full');
    expect(handedOff).toHaveLength(full.length);
    const statuses = lines.filter((line) => line.type === 'project-status');
    expect(statuses.at(-1)).toMatchObject({ to: 'completed' });

    // Every session has its entry, and each hand-off says at which turn the context filled.
    const log = await runCli(['memory', 'log', 'calc', '--local', '--json'], {
      cwd: world.dir,
      env,
    });
    expect(log.code).toBe(0);
    const entries = (JSON.parse(log.stdout) as { entries: Array<{ session: number }> }).entries;
    for (let session = 1; session <= ends.length; session += 1) {
      expect(entries.some((entry) => entry.session === session)).toBe(true);
    }
    const progress = await runCli(['memory', 'log', 'calc', '--local'], { cwd: world.dir, env });
    for (const line of handedOff) {
      expect(progress.stdout).toContain(`filled at turn ${line.result?.contextFull?.turn}`);
    }
  }, 900_000);
});
