import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli } from './helpers.js';

const world = cliWorld();

describe('baton run on a long project', () => {
  it('--stall-after N pauses with reason no_progress (exit 10, an event, projects --local shows it); continuing starts the count again', async () => {
    const goal = path.join(world.dir, 'goal.md');
    await writeFile(goal, 'Two things\n- first\n- second\n');
    // Three turns per session: the simulated agent reads its memory and never reaches a flip.
    const args = ['run', '--goal-file', goal, '--project', 'stuck', '--max-turns', '3', '--json'];
    const first = await runCli([...args, '--stall-after', '2'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(first.code).toBe(10);
    const lines = first.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const ends = lines.filter((line) => line['type'] === 'session-end');
    expect(ends).toHaveLength(3); // init + 2 resumes without progress
    const status = lines.find(
      (line) => line['type'] === 'project-status' && line['to'] === 'paused',
    );
    expect(status).toMatchObject({ from: 'running', to: 'paused' });
    expect(String(status?.['reason'])).toMatch(
      /^no_progress: 2 sessions in a row without a newly passing feature \(0 of 2 pass\)/,
    );
    expect(first.stderr).toContain('Paused: no_progress: 2 sessions in a row');
    const events = await readFile(
      path.join(world.home, 'projects', 'stuck', 'events.jsonl'),
      'utf8',
    );
    expect(events).toContain('"type":"project-status"');

    const listed = await runCli(['projects', '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    const rows = JSON.parse(listed.stdout) as Array<{
      id: string;
      status: string;
      statusReason: string;
    }>;
    expect(rows.find((row) => row.id === 'stuck')).toMatchObject({ status: 'paused' });
    expect(rows.find((row) => row.id === 'stuck')?.statusReason).toMatch(/^no_progress: /);

    // The limit is kept for the project; continuing resets the streak: two more sessions, paused again.
    const again = await runCli(['run', '--project', 'stuck', '--max-turns', '3', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(again.code).toBe(10);
    expect(
      again.stdout.split('\n').filter((line) => line.includes('"type":"session-end"')),
    ).toHaveLength(2);

    // Every session has its entry in the whole log.
    const log = await runCli(['memory', 'log', 'stuck', '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(log.code).toBe(0);
    const entries = (JSON.parse(log.stdout) as { entries: Array<{ session: number }> }).entries;
    for (const session of [1, 2, 3, 4, 5]) {
      expect(entries.some((entry) => entry.session === session)).toBe(true);
    }
  }, 120_000);
});
