import { existsSync } from 'node:fs';
import { chmod, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { checkoutFingerprint, createUserRepo, git, cliWorld } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

const world = cliWorld();

const GOAL = 'Greeter\n- say hello\n- say goodbye';

async function projectDirs(): Promise<string[]> {
  return readdir(path.join(world.home, 'projects')).catch(() => []);
}

describe('baton run --repo', () => {
  it("leaves the user's checkout byte-identical and puts the work on baton/<id> in that repository", async () => {
    const repo = await createUserRepo(world.dir);
    const before = await checkoutFingerprint(repo);
    const result = await runCli(['run', '--repo', repo, '--goal', GOAL, '--project', 'greet'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_CHECKPOINT_INTERVAL_MS: '0' }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`repo ${repo} · base feature · branch baton/greet`);

    expect(await checkoutFingerprint(repo)).toEqual(before);
    const { project: record } = JSON.parse(
      await readFile(path.join(world.home, 'projects', 'greet', 'project.json'), 'utf8'),
    ) as { project: Record<string, unknown> };
    expect(record).toMatchObject({
      repo,
      base: 'feature',
      baseCommit: git(repo, 'rev-parse', 'feature'),
      branch: 'baton/greet',
      lastCheckpoint: git(repo, 'rev-parse', 'baton/greet'),
      skipHooks: false,
    });
    // The branch starts at the base and holds every feature's code, none of the uncommitted work.
    expect(git(repo, 'merge-base', '--is-ancestor', 'feature', 'baton/greet')).toBe('');
    const files = git(repo, 'ls-tree', '-r', '--name-only', 'baton/greet').split('\n');
    expect(files).toEqual(
      expect.arrayContaining(['src/feature.js', 'init.sh', 'features/f1.sh', 'features/f2.sh']),
    );
    expect(files).not.toContain('notes.txt');
    expect(files).not.toContain('src/staged.js');
    expect(git(repo, 'show', 'baton/greet:features/f2.sh')).toContain('F2 ok');

    // BATON_CHECKPOINT_INTERVAL_MS=0: checkpoints after turns, each acknowledged as pushed.
    const events = (
      await readFile(path.join(world.home, 'projects', 'greet', 'events.jsonl'), 'utf8')
    )
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; reason?: string; pushed?: boolean });
    const checkpoints = events.filter((event) => event.type === 'checkpoint');
    expect(checkpoints.some((event) => event.reason === 'turn')).toBe(true);
    expect(checkpoints.every((event) => event.pushed === true)).toBe(true);

    const diff = await runCli(['diff', 'greet', '--local', '--stat'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(diff.code).toBe(0);
    expect(diff.stdout).toContain('features/f1.sh');
    expect(diff.stdout).not.toContain('src/feature.js');
    const full = await runCli(['diff', 'greet', '--local'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(full.stdout).toContain("+echo 'F1 ok: say hello'");
  });

  it('bad --repo, --base or a foreign baton/<id> branch: one line, exit 2, nothing created', async () => {
    const repo = await createUserRepo(world.dir);
    git(repo, 'branch', 'baton/taken', 'main');
    const refs = git(repo, 'for-each-ref');
    for (const [args, message] of [
      [['--repo', path.join(world.dir, 'missing')], /no such directory/],
      [['--repo', world.dir], /cannot read the repository/],
      [['--repo', repo, '--base', 'nope'], /has no branch nope/],
      [['--repo', repo, '--base', 'bad..name'], /not a valid branch name/],
      [['--repo', 'https://user:hunter2@example.com/r.git'], /credentials/],
      [['--repo', repo, '--project', 'taken'], /baton\/taken that Baton did not make/],
      [['--base', 'main'], /--base needs --repo/],
      [['--workspace', repo], /is a git repository; give it as --repo/],
    ] as const) {
      const result = await runCli(['run', '--goal', GOAL, ...args], {
        cwd: world.dir,
        env: cliEnv(world.home),
      });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).not.toContain('hunter2');
      expect(result.stdout).toBe('');
    }
    expect(await projectDirs()).toEqual([]);
    expect(await stat(path.join(world.home, 'git')).catch(() => null)).toBeNull();
    expect(git(repo, 'for-each-ref')).toBe(refs);
    // Eight CLI starts one after the other: ~5 s each on a loaded 2-core machine.
  }, 180_000);

  it('runs the repository hooks (a refusal is saved and marked); --skip-hooks does not run them', async () => {
    const repo = await createUserRepo(world.dir);
    const log = path.join(world.dir, 'hook.log');
    const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
    await writeFile(hook, `#!/bin/sh\necho ran >> ${log}\necho "style: fix it" >&2\nexit 1\n`);
    await chmod(hook, 0o755);
    const goal = 'Tiny\n- one thing';
    const hooked = await runCli(['run', '--repo', repo, '--goal', goal, '--project', 'hooked'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(hooked.code).toBe(0);
    // The hook ran (its refusal is in the trailer) inside the sandbox: the host file it tried to
    // append to, outside the workspace, was never written.
    expect(existsSync(log)).toBe(false);
    expect(git(repo, 'log', '--format=%B', 'baton/hooked')).toContain(
      'Baton-Hooks: refused (style: fix it); committed without hooks',
    );
    expect(git(repo, 'show', 'baton/hooked:features/f1.sh')).toContain('F1 ok');

    const skipped = await runCli(
      ['run', '--repo', repo, '--skip-hooks', '--goal', goal, '--project', 'skipped'],
      { cwd: world.dir, env: cliEnv(world.home) },
    );
    expect(skipped.code).toBe(0);
    expect(git(repo, 'log', '--format=%B', 'baton/skipped')).not.toContain('Baton-Hooks');
    expect(
      JSON.parse(
        await readFile(path.join(world.home, 'projects', 'skipped', 'project.json'), 'utf8'),
      ),
    ).toMatchObject({ project: { skipHooks: true } });
  });
});
