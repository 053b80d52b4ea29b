import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createUserRepo, git, cliWorld } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

const world = cliWorld();

const GOAL = 'Greeter\n- say hello\n- say goodbye';

async function eventTypes(project: string): Promise<string[]> {
  const text = await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { type: string }).type);
}

async function run(repo: string, project: string, snapshots: string | undefined) {
  return runCli(['run', '--repo', repo, '--goal', GOAL, '--project', project], {
    cwd: world.dir,
    env: cliEnv(world.home, { BATON_MEMORY_SNAPSHOTS: snapshots }),
  });
}

describe('baton run and BATON_MEMORY_SNAPSHOTS', () => {
  it('writes refs/baton/memory/<id> by default (no lease: no fence token), none with off', async () => {
    const repo = await createUserRepo(world.dir);

    const on = await run(repo, 'snap-on', undefined);
    expect(on.stderr).toBe('');
    expect(on.code).toBe(0);
    const manifest = JSON.parse(
      git(repo, 'show', 'refs/baton/memory/snap-on:manifest.json'),
    ) as Record<string, unknown>;
    expect(manifest).toMatchObject({ projectId: 'snap-on', goal: GOAL, fenceToken: null });
    expect(git(repo, 'show', 'refs/baton/memory/snap-on:memories/features.json')).toContain(
      '"passes": true',
    );
    expect(await eventTypes('snap-on')).toContain('memory-snapshot');

    const off = await run(repo, 'snap-off', 'off');
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(git(repo, 'rev-parse', 'baton/snap-off')).toMatch(/^[0-9a-f]{40}$/);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/baton')).toBe(
      'refs/baton/memory/snap-on',
    );
    const types = await eventTypes('snap-off');
    expect(types).toContain('checkpoint');
    expect(types).not.toContain('memory-snapshot');
  }, 180_000);

  it('refuses any other value in one line, before anything runs', async () => {
    const repo = await createUserRepo(world.dir);
    const refused = await run(repo, 'snap-bad', 'no');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('baton: BATON_MEMORY_SNAPSHOTS must be on or off, got "no".\n');
    expect(git(repo, 'for-each-ref', 'refs/heads/baton', 'refs/baton')).toBe('');
  });
});
