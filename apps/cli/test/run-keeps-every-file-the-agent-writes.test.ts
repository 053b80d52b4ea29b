/**
 * `baton run` keeps every file the agent writes, whatever it does to the workspace: a repository
 * it scaffolds with `git init` in a subdirectory (empty, or with commits of its own), a planted
 * `.git` file naming a repository elsewhere on the host and a fake `.git` directory, 30,000
 * secret-looking files, and names git refuses to store. The model's commands run in the first
 * turn of every session (`scriptedCommands`); the scripted agent does the project's work. In
 * each, the run completes, every file the agent wrote is on the branch as a plain file or named
 * as left out with the reason, and no checkpoint fails.
 */
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { scriptedCommands, startModelSim } from '@baton/model-sim';
import { checkoutFingerprint, createUserRepo, git, cliWorld } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

const world = cliWorld();

interface CheckpointEvent {
  type: 'checkpoint';
  error?: string;
  pushed: boolean;
  skipped: string[];
  special?: Array<{ path: string; kind: string }>;
}

/** `baton run` on a user repository with the model running `commands` first in each session. */
async function runWith(
  project: string,
  commands: string[],
  extraEnv: Record<string, string> = { BATON_CHECKPOINT_INTERVAL_MS: '0' },
) {
  const repo = await createUserRepo(world.dir);
  const results: Array<{ command: string; output: string; isError: boolean }> = [];
  const sim = world.closeAfter(
    await startModelSim({
      port: 0,
      script: scriptedCommands({ commands, onResult: (result) => results.push(result) }),
    }),
  );
  const result = await runCli(
    ['run', '--repo', repo, '--goal', 'Greeter\n- say hello\n- say goodbye', '--project', project],
    {
      cwd: world.dir,
      env: cliEnv(world.home, {
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: sim.url,
        ...extraEnv,
      }),
    },
  );
  const events = (
    await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8')
  )
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string });
  const checkpoints = events.filter(
    (event): event is CheckpointEvent => event.type === 'checkpoint',
  );
  const branch = `baton/${project}`;
  /** `mode path` of every entry on the branch. */
  const tree = git(repo, 'ls-tree', '-r', branch)
    .split('\n')
    .map((line) => {
      const [meta, file] = line.split('\t');
      return `${meta?.split(' ')[0]} ${file}`;
    });
  return {
    repo,
    result,
    results,
    checkpoints,
    tree,
    workspace: path.join(world.home, 'projects', project, 'workspace'),
  };
}

/** The run completed, exit 0, and no checkpoint failed or stayed unpushed. */
function expectCompletedWithEveryCheckpoint(run: Awaited<ReturnType<typeof runWith>>): void {
  expect(run.result.stderr).toBe('');
  expect(run.result.code).toBe(0);
  expect(run.result.stdout).toMatch(/Completed/i);
  expect(run.checkpoints.length).toBeGreaterThan(1);
  expect(run.checkpoints.filter((event) => event.error !== undefined)).toEqual([]);
  expect(run.checkpoints.at(-1)?.pushed).toBe(true);
  const files = run.tree.map((entry) => entry.split(' ')[1]);
  expect(files).toEqual(expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f2.sh']));
  // No gitlink (a nested repository recorded as a commit) and no `.git` of any case.
  expect(run.tree.filter((entry) => entry.startsWith('160000'))).toEqual([]);
  expect(run.tree.filter((entry) => /(^|\/)\.git(\/|$)/i.test(entry.split(' ')[1] ?? ''))).toEqual(
    [],
  );
}

describe('baton run keeps every file the agent writes', () => {
  it('a repository scaffolded with git init in a subdirectory, and one with commits of its own: checkpoints go on, every file on the branch', async () => {
    const run = await runWith('nested', [
      "mkdir -p tools/helper && cd tools/helper && git init -q && printf 'fn main() {}\\n' > main.rs",
      'mkdir -p lib/own && cd lib/own && git init -q && echo one > one.txt && git add one.txt && git -c user.name=a -c user.email=a@example.com commit -qm one; echo two > two.txt',
    ]);
    expectCompletedWithEveryCheckpoint(run);
    expect(run.results.filter((result) => result.isError)).toEqual([]);
    expect(run.tree).toEqual(
      expect.arrayContaining([
        '100644 tools/helper/main.rs',
        '100644 lib/own/one.txt',
        '100644 lib/own/two.txt',
      ]),
    );
  }, 240_000);

  it('a planted .git file naming a host repository and a fake .git directory: plain files, the host repository untouched', async () => {
    const canary = path.join(world.dir, 'canary');
    await mkdir(canary);
    await createUserRepo(canary);
    const canaryRepo = path.join(canary, 'user-repo');
    const before = await checkoutFingerprint(canaryRepo);
    const run = await runWith('planted', [
      `mkdir -p vendor/lib && printf 'gitdir: ${canaryRepo}/.git\\n' > vendor/lib/.git && echo lib > vendor/lib/a.txt`,
      "mkdir -p other/.git && echo 'ref: refs/heads/main' > other/.git/HEAD && echo x > other/x.txt",
    ]);
    expectCompletedWithEveryCheckpoint(run);
    expect(run.tree).toEqual(
      expect.arrayContaining(['100644 vendor/lib/a.txt', '100644 other/x.txt']),
    );
    expect(await checkoutFingerprint(canaryRepo)).toEqual(before);
  }, 240_000);

  it('30,000 secret-looking files: every one left out and kept, the work committed', async () => {
    const key = `sk-ant-api03-${'q'.repeat(40)}`;
    const run = await runWith(
      'many',
      [
        // 15,000 secret names and 15,000 files holding a key: split writes them in one process.
        `mkdir -p fixtures && cd fixtures && yes x | head -n 15000 | split -l 1 -a 5 --additional-suffix=.asc - k && yes '${key}' | head -n 15000 | split -l 1 -a 5 --additional-suffix=.txt - t && ls | wc -l`,
      ],
      {},
    );
    expect(run.results[0]?.output.trim()).toBe('30000');
    expectCompletedWithEveryCheckpoint(run);
    expect(run.tree.filter((entry) => entry.includes('fixtures/'))).toEqual([]);
    expect(run.checkpoints.at(-1)?.skipped).toHaveLength(30_000);
    expect(await readdir(path.join(run.workspace, 'fixtures'))).toHaveLength(30_000);
  }, 600_000);

  it('file names git refuses are left out and named with the reason; the rest is committed', async () => {
    const run = await runWith('names', [
      "mkdir -p .Git sub && echo a > .Git/config && echo b > 'sub/GIT~1' && echo ok > ok.txt",
    ]);
    expectCompletedWithEveryCheckpoint(run);
    expect(run.tree).toContain('100644 ok.txt');
    expect(run.checkpoints.at(-1)?.special).toEqual(
      expect.arrayContaining([
        { path: '.Git/config', kind: 'refused-name' },
        { path: 'sub/GIT~1', kind: 'refused-name' },
      ]),
    );
    expect(run.result.stdout).toContain(
      'left out, git cannot store them: .Git/config (refused-name), sub/GIT~1 (refused-name)',
    );
    expect(await readFile(path.join(run.workspace, '.Git', 'config'), 'utf8')).toBe('a\n');
  }, 240_000);
});
