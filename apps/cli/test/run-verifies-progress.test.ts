import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

// Several sessions with real git and real sandboxed checks per run: slow on a loaded machine.
vi.setConfig({ testTimeout: 600_000 });

const world = cliWorld();

const env = () => cliEnv(world.home);

interface CheckRow {
  id: string;
  passes: boolean;
  check: string | null;
  state: string;
  evidence: { passed: boolean; commit: string | null; trigger: string; command: string } | null;
}

async function checksJson(id: string) {
  const result = await runCli(['checks', id, '--local', '--json'], { cwd: world.dir, env: env() });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as {
    counts: Record<string, number>;
    verification: unknown;
    features: CheckRow[];
  };
}

async function events(id: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path.join(world.home, 'projects', id, 'events.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('baton run verifies progress', () => {
  it('refuses a false claim, catches a regression, keeps a claim across sessions, and completes on checks that passed on the final commit', async () => {
    const goal = [
      'Todo app.',
      '- Add a todo [sim:no-check]',
      '- List todos [sim:claim-first]',
      '- Mark done [sim:breaks F2]',
    ].join('\n');
    const result = await runCli(['run', '--goal', goal, '--project', 'vp'], {
      cwd: world.dir,
      env: env(),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const logged = await events('vp');
    // F2's flip before any work was refused on its failing check; the work was then verified.
    const f2 = logged.filter(
      (event) =>
        (event.type === 'check-failed' || event.type === 'check-passed') &&
        (event.evidence as { featureId: string }).featureId === 'F2',
    );
    expect(f2[0]).toMatchObject({ type: 'check-failed', evidence: { trigger: 'flip' } });
    // F3's session broke F2: the end-of-session re-run caught it and set it back to failing.
    expect(logged.find((event) => event.type === 'feature-regressed')).toMatchObject({
      featureId: 'F2',
      evidence: { passed: false, trigger: 'regression' },
    });
    const progress = await readFile(
      path.join(world.home, 'projects', 'vp', 'memories', 'progress.md'),
      'utf8',
    );
    expect(progress).toMatch(/written by Baton: regression check/);

    // The record kept with the project: F1 was claimed sessions before the end and is still
    // claimed (carried from session to session), F2 and F3 verified on the final commit.
    const project = JSON.parse(
      await readFile(path.join(world.home, 'projects', 'vp', 'project.json'), 'utf8'),
    ) as { project: { lastCheckpoint: string; counters: Record<string, number> } };
    const checks = await checksJson('vp');
    expect(checks.counts).toEqual({
      passing: 3,
      total: 3,
      verified: 2,
      claimed: 1,
      regressed: 0,
    });
    expect(checks.features.map((row) => [row.id, row.state])).toEqual([
      ['F1', 'claimed'],
      ['F2', 'verified'],
      ['F3', 'verified'],
    ]);
    expect(checks.features[0]).toMatchObject({ check: null, evidence: null });
    for (const row of checks.features.slice(1)) {
      expect(row.evidence).toMatchObject({
        passed: true,
        commit: project.project.lastCheckpoint,
      });
    }
    const sessions = (
      await readFile(path.join(world.home, 'projects', 'vp', 'sessions.jsonl'), 'utf8')
    )
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { flippedFeatures: string[] });
    const claimedIn = sessions.findIndex((session) => session.flippedFeatures.includes('F1'));
    expect(claimedIn).toBeLessThan(sessions.length - 1);

    // The same counts in the project list and in the human-readable view.
    const list = await runCli(['projects', '--local'], { cwd: world.dir, env: env() });
    expect(list.stdout).toMatch(/^vp\s+completed\s+3\/3\s+2v 1c 0r/m);
    const text = await runCli(['checks', 'vp', '--local'], { cwd: world.dir, env: env() });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('3/3 passing (2 verified, 1 claimed, 0 regressed)');
    expect(text.stdout).toMatch(/^F2\s+verified\s+passed \(exit 0,/m);
    expect(text.stdout).toMatch(/^F1\s+claimed\s+-/m);
  });

  it('--require-checks refuses a flip with no check; --check gives the check, with BATON_FEATURE_ID', async () => {
    const goal = 'Todo app.\n- Add a todo [sim:no-check]\n- List todos [sim:no-check]';
    const refused = await runCli(
      ['run', '--goal', goal, '--project', 'strict', '--require-checks', '--sessions', '2'],
      { cwd: world.dir, env: env() },
    );
    expect(refused.stderr).toBe('');
    // Nothing could be verified: two sessions, no feature passing.
    const strict = await checksJson('strict');
    expect(strict.verification).toEqual({ requireChecks: true });
    expect(strict.counts).toMatchObject({ passing: 0, claimed: 0 });
    expect(strict.features.map((row) => row.state)).toEqual(['failing', 'failing']);
    // The settings are the project's: a later run may not change them.
    const changed = await runCli(['run', '--project', 'strict', '--check', 'true'], {
      cwd: world.dir,
      env: env(),
    });
    expect(changed.code).toBe(2);
    expect(changed.stderr.trim().split('\n')).toHaveLength(1);
    expect(changed.stderr).toContain(
      '--check, --require-checks, --check-timeout and --regression-budget are set when a project is created',
    );

    const check = 'sh "features/$(echo "$BATON_FEATURE_ID" | tr F f).sh"';
    const done = await runCli(
      ['run', '--goal', goal, '--project', 'given', '--require-checks', '--check', check],
      { cwd: world.dir, env: env() },
    );
    expect(done.stderr).toBe('');
    expect(done.code).toBe(0);
    const given = await checksJson('given');
    expect(given.verification).toEqual({ check, requireChecks: true });
    expect(given.counts).toMatchObject({ passing: 2, verified: 2, claimed: 0 });
    for (const row of given.features) {
      expect(row).toMatchObject({ check, state: 'verified', evidence: { command: check } });
    }

    const bad = await runCli(['run', '--goal', goal, '--project', 'bad', '--check', 'a\u0007b'], {
      cwd: world.dir,
      env: env(),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim()).toBe('baton: --check: must be one line.');
  });
});
