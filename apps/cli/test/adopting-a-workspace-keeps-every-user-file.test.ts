/**
 * `--workspace DIR` on a directory already holding the user's files (credentials among them):
 * refused without `--adopt`, with a preview of what adopting it would do; adopted with `--adopt`,
 * every file of the user's stays byte for byte over every session, and none of the credentials
 * reaches the project branch. From `baton run` and from `baton enqueue` + a worker.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cliWorld, createBareRemote, git } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const GOAL = 'Greeter\n- say hello\n- say goodbye';

/** The user's files: what must never be deleted, changed or published. */
const CANARIES: Record<string, string> = {
  '.env': 'API_TOKEN=canary-env-0b7e\n',
  '.npmrc': '//registry.npmjs.org/:_authToken=canary-npmrc-51c2\n',
  id_rsa:
    '-----BEGIN OPENSSH PRIVATE KEY-----\ncanary-key-9d41\n-----END OPENSSH PRIVATE KEY-----\n',
  '.aws/credentials': '[default]\naws_secret_access_key = canary-aws-77f0\n',
  'notes/todo.txt': 'my own notes\n',
};

async function userDirectory(root: string): Promise<string> {
  const dir = path.join(root, 'mine');
  for (const [name, content] of Object.entries(CANARIES)) {
    await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await writeFile(path.join(dir, name), content);
  }
  return dir;
}

async function expectCanariesIntact(dir: string): Promise<void> {
  for (const [name, content] of Object.entries(CANARIES)) {
    expect(await readFile(path.join(dir, name), 'utf8'), name).toBe(content);
  }
}

/** Files on the project branch of a Baton-owned remote. */
function branchFiles(remote: string, branch: string): string[] {
  return git(remote, 'ls-tree', '-r', '--name-only', branch).split('\n');
}

function expectNoCanaryPublished(remote: string, branch: string): void {
  const files = branchFiles(remote, branch);
  expect(files).toContain('notes/todo.txt');
  for (const secret of ['.env', '.npmrc', 'id_rsa', '.aws/credentials']) {
    expect(files).not.toContain(secret);
  }
  const everything = git(remote, 'log', '-p', branch);
  expect(everything).not.toMatch(/canary-(?:env|npmrc|key|aws)/);
}

describe('baton run --workspace on a directory with files', () => {
  const world = cliWorld();

  it('is refused without --adopt, with the preview; adopted, every file stays and no credential is pushed', async () => {
    const mine = await userDirectory(world.dir);
    // BATON_MAX_FILE_BYTES: a file over the limit is kept and never committed.
    const data = 'd'.repeat(2048);
    await writeFile(path.join(mine, 'data.bin'), data);
    const limit = { BATON_MAX_FILE_BYTES: '1024' };
    const refused = await runCli(
      ['run', '--workspace', mine, '--goal', GOAL, '--project', 'adopt'],
      { cwd: world.dir, env: cliEnv(world.home, limit) },
    );
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toContain(
      `--workspace ${mine} already holds files Baton did not create; add --adopt`,
    );
    expect(refused.stdout).toContain(`Adopting would take ${mine}: nothing in it is ever deleted.`);
    expect(refused.stdout).toContain(
      'committed and pushed as the first checkpoint: 1 file (notes/todo.txt)',
    );
    expect(refused.stdout).toContain(
      'kept, never committed (look like secrets): 4 files (.aws/credentials, .env, .npmrc, id_rsa)',
    );
    expect(refused.stdout).toContain(
      'kept, never committed (over 1.0 KiB): 1 file (data.bin 2.0 KiB)',
    );
    expect(await readdir(path.join(world.home, 'projects')).catch(() => [])).toEqual([]);
    expect((await readdir(mine)).sort()).toEqual([
      '.aws',
      '.env',
      '.npmrc',
      'data.bin',
      'id_rsa',
      'notes',
    ]);

    const adopted = await runCli(
      ['run', '--workspace', mine, '--adopt', '--goal', GOAL, '--project', 'adopt'],
      { cwd: world.dir, env: cliEnv(world.home, { ...limit, BATON_CHECKPOINT_INTERVAL_MS: '0' }) },
    );
    expect(adopted.stderr).toBe('');
    expect(adopted.code).toBe(0);
    expect(adopted.stdout).toContain(`Adopting ${mine}: nothing in it is ever deleted.`);
    // The live view names what each checkpoint left out.
    expect(adopted.stdout).toContain('left out as secrets: .aws/credentials, .env, .npmrc, id_rsa');
    expect(adopted.stdout).toContain('left out as too large: data.bin (2.0 KiB)');
    const events = (
      await readFile(path.join(world.home, 'projects', 'adopt', 'events.jsonl'), 'utf8')
    )
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; skipped?: string[] });
    expect(events.filter((event) => event.type === 'session-start').length).toBeGreaterThan(1);
    const checkpoints = events.filter((event) => event.type === 'checkpoint');
    expect(checkpoints.at(-1)?.skipped).toEqual(['.aws/credentials', '.env', '.npmrc', 'id_rsa']);
    await expectCanariesIntact(mine);
    expect(await readFile(path.join(mine, 'data.bin'), 'utf8')).toBe(data);
    const remote = path.join(world.home, 'remotes', 'adopt.git');
    expectNoCanaryPublished(remote, 'baton/adopt');
    expect(branchFiles(remote, 'baton/adopt')).not.toContain('data.bin');
    expect(branchFiles(remote, 'baton/adopt')).toEqual(
      expect.arrayContaining(['features/f1.sh', 'init.sh']),
    );

    // Continued later: still every file, byte for byte.
    const again = await runCli(['run', '--project', 'adopt', '--sessions', '1'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(again.stderr).toBe('');
    await expectCanariesIntact(mine);
    expectNoCanaryPublished(remote, 'baton/adopt');
  }, 180_000);
});

describe('baton enqueue --workspace on a directory with files', () => {
  const world = redisCliWorld();

  it('is refused without --adopt (nothing created); adopted, a worker keeps every file and publishes no credential', async () => {
    const mine = await userDirectory(world.dir);
    const id = world.redis.projectId('adopt');
    const refused = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--workspace',
      mine,
    ]);
    expect(refused.code).toBe(2);
    expect(oneLine(refused.stderr)).toContain(
      'already holds files Baton did not create; add --adopt',
    );
    expect(refused.stdout).toContain('kept, never committed (look like secrets): 4 files');
    expect(await world.redis.control.getProject(id)).toBeNull();

    const queued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--workspace',
      mine,
      '--adopt',
    ]);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    expect(queued.stdout).toContain(`Adopting ${mine}`);

    const worker = world.startWorker('worker-home', { BATON_CHAIN_DELAY_MS: '0' });
    await worker.waitForOutput('"worker started"', 60_000);
    // Waits on the project's own record: the worker's sessions end it `completed`.
    let status = '';
    const deadline = Date.now() + 150_000;
    while (Date.now() < deadline) {
      const result = await world.cli(['status', id, '--json']);
      status = (JSON.parse(result.stdout) as { status: string }).status;
      if (status === 'completed' || status === 'failed' || status === 'paused') break;
    }
    worker.kill('SIGTERM');
    await worker.done;
    expect(status).toBe('completed');
    await expectCanariesIntact(mine);
    const remote = path.join(world.dir, 'worker-home', 'remotes', `${id}.git`);
    expectNoCanaryPublished(remote, `baton/${id}`);
    const text = await world.cli(['status', id]);
    expect(text.stdout).toMatch(
      /left out {2}of session \d+'s checkpoint, kept in the workspace: \.aws\/credentials \(secret\), \.env \(secret\), \.npmrc \(secret\), id_rsa \(secret\)/,
    );
  }, 240_000);
});

describe('a worker re-checks the workspace it is given before writing there', () => {
  const world = redisCliWorld();
  const startWorker = () => world.startWorker('worker-home', { BATON_CHAIN_DELAY_MS: '0' });

  /** Reads `baton status ID --json` until the project is paused, completed or failed. */
  async function settled(id: string): Promise<{ status: string; statusReason: string | null }> {
    const deadline = Date.now() + 150_000;
    let status = { status: '', statusReason: null as string | null };
    while (Date.now() < deadline) {
      const result = await world.cli(['status', id, '--json']);
      status = JSON.parse(result.stdout) as typeof status;
      if (['completed', 'failed', 'paused'].includes(status.status)) break;
    }
    return status;
  }

  it('pauses, changing nothing, when files appeared in a workspace enqueued empty without --adopt', async () => {
    const mine = path.join(world.dir, 'mine');
    await mkdir(mine);
    const id = world.redis.projectId('appeared');
    const queued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--workspace',
      mine,
    ]);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    // Between the enqueue and the worker, the user's own files land there.
    await userDirectory(world.dir);

    startWorker();
    const status = await settled(id);
    expect(status.status).toBe('paused');
    expect(oneLine(status.statusReason ?? '')).toBe(
      `the workspace could not be prepared: the workspace ${mine} already holds files Baton did not create, and the project was not created with --adopt; nothing in it was changed. Empty it, or create the project with --adopt to make them its first checkpoint.`,
    );
    await expectCanariesIntact(mine);
    expect((await readdir(mine)).sort()).toEqual(['.aws', '.env', '.npmrc', 'id_rsa', 'notes']);
  }, 240_000);

  it('adopts what --adopt allowed but never over a file of the base; once that file is moved, resume completes', async () => {
    const remote = await createBareRemote(world.dir, 'origin.git');
    const mine = await userDirectory(world.dir);
    await writeFile(path.join(mine, 'README.md'), '# my own readme\n');
    const id = world.redis.projectId('clash');
    const queued = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--repo',
      remote,
      '--workspace',
      mine,
      '--adopt',
    ]);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);
    expect(queued.stdout).toContain(`Adopting ${mine}`);

    startWorker();
    const clash = await settled(id);
    expect(clash.status).toBe('paused');
    expect(oneLine(clash.statusReason ?? '')).toMatch(
      new RegExp(
        `^the workspace could not be prepared: the workspace ${mine} holds files the base commit [0-9a-f]{12} also has \\(README\\.md\\); adopting it would overwrite them, so nothing in it was changed\\.`,
      ),
    );
    expect(await readFile(path.join(mine, 'README.md'), 'utf8')).toBe('# my own readme\n');
    await expectCanariesIntact(mine);
    expect((await readdir(mine)).sort()).toEqual([
      '.aws',
      '.env',
      '.npmrc',
      'README.md',
      'id_rsa',
      'notes',
    ]);

    await rm(path.join(mine, 'README.md'));
    const resumed = await world.cli(['resume', id]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect((await settled(id)).status).toBe('completed');
    await expectCanariesIntact(mine);
    expectNoCanaryPublished(remote, `baton/${id}`);
    expect(branchFiles(remote, `baton/${id}`)).toEqual(
      expect.arrayContaining(['README.md', 'notes/todo.txt', 'init.sh', 'features/f1.sh']),
    );
  }, 300_000);
});
