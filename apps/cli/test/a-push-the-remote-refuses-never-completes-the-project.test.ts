/**
 * A push refused by a server-side `pre-receive` hook on the project's remote (issue #29): every
 * refused checkpoint is reported and counted, the project is never `completed` but paused with
 * `checkpoint_failed` and the remote's words, the work stays committed in the worker's clone, and
 * once the hook lets pushes through the next session pushes it and the project completes. From
 * `baton run`, and from `baton enqueue` + `baton worker` + `baton status` + `baton resume` with a
 * webhook receiver.
 */
import { existsSync } from 'node:fs';
import { chmod, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { verifyWebhookSignature } from '@baton/projects';
import {
  checkoutFingerprint,
  cliWorld,
  createUserRepo,
  git,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

const GOAL = 'Greeter\n- say hello\n- say goodbye';
const POLICY = 'policy: baton branches are frozen until Monday';

/** The server-side hook: every push to the repository is refused, with a reason. */
async function refusePushes(repo: string): Promise<string> {
  const hook = path.join(repo, '.git', 'hooks', 'pre-receive');
  await writeFile(hook, `#!/bin/sh\necho "${POLICY}" >&2\nexit 1\n`);
  await chmod(hook, 0o755);
  return hook;
}

function branchExists(repo: string, branch: string): boolean {
  return git(repo, 'for-each-ref', `refs/heads/${branch}`) !== '';
}

/** What a refused push says wherever it is reported. */
const REFUSED =
  /refused the push of baton\/[\w-]+: \[remote rejected\] \(pre-receive hook declined\) \(the remote said: policy: baton branches are frozen until Monday\)/;

describe('baton run on a repository whose remote refuses pushes', () => {
  const world = cliWorld();

  it('reports and counts every refused checkpoint, pauses checkpoint_failed with exit 3, keeps the work in the clone; after the fix the next run pushes it and completes', async () => {
    const repo = await createUserRepo(world.dir);
    const hook = await refusePushes(repo);
    const before = await checkoutFingerprint(repo);
    const run = await runCli(['run', '--repo', repo, '--goal', GOAL, '--project', 'frozen'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_CHECKPOINT_INTERVAL_MS: '0' }),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(3);
    const lines = run.stdout.split('\n');
    // Every checkpoint's line says it was committed and not pushed, with the remote's reason.
    const checkpointLines = lines.filter((line) => line.includes('checkpoint ('));
    expect(checkpointLines.length).toBeGreaterThan(1);
    for (const line of checkpointLines) expect(line).toMatch(REFUSED);
    // The session is not shown as a green completion: its work is not on the branch.
    const sessionEnd = lines.find((line) => /^. completed · /.test(line));
    expect(sessionEnd).toMatch(/^✗ completed · .* · \d+ checkpoints? failed, the last one too · /);
    expect(run.stdout).toMatch(
      new RegExp(
        `Paused: checkpoint_failed: checkpoint [0-9a-f]{12} was not pushed: .*${REFUSED.source}`,
      ),
    );
    const closing = lines.find((line) => line.startsWith('Features '));
    expect(closing).toMatch(/ · (\d+) checkpoints? failed · exit 3$/);
    expect(run.stdout).toContain('Continue with: baton run --project frozen');

    // Nothing reached the user's repository; the work is committed in Baton's clone.
    expect(branchExists(repo, 'baton/frozen')).toBe(false);
    expect(await checkoutFingerprint(repo)).toEqual(before);
    const clone = path.join(world.home, 'git', 'frozen.git');
    const kept = git(clone, 'rev-parse', 'HEAD');
    expect(git(clone, 'ls-tree', '-r', '--name-only', kept).split('\n')).toContain('init.sh');

    // The hook is gone: the next run pushes what the clone kept first, then completes.
    await rm(hook);
    const again = await runCli(['run', '--project', 'frozen', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home, { BATON_CHECKPOINT_INTERVAL_MS: '0' }),
    });
    expect(again.code, again.stderr).toBe(0);
    const end = JSON.parse(again.stdout.trim().split('\n').at(-1) ?? '{}') as Record<
      string,
      unknown
    >;
    expect(end).toMatchObject({
      type: 'run-end',
      exitCode: 0,
      features: { passing: 2, total: 2 },
      checkpointFailures: 0,
    });
    const head = git(repo, 'rev-parse', 'baton/frozen');
    expect(end.lastCheckpoint).toBe(head);
    expect(git(repo, 'merge-base', '--is-ancestor', kept, head)).toBe('');
    expect(git(repo, 'ls-tree', '-r', '--name-only', head).split('\n')).toEqual(
      expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f2.sh']),
    );
  }, 240_000);
});

describe('a worker whose pushes the remote refuses', () => {
  const world = redisCliWorld();
  const SECRET = 'whsec-refused-push';
  function bodies(
    receiver: WebhookReceiver,
  ): Array<{ type: string; project: Record<string, unknown> }> {
    return receiver.requests.map((request) => {
      expect(
        verifyWebhookSignature(
          request.rawBody,
          SECRET,
          request.headers['x-baton-signature'] as string | undefined,
        ),
      ).toBe(true);
      return JSON.parse(request.rawBody) as { type: string; project: Record<string, unknown> };
    });
  }

  it('pauses the project checkpoint_failed (webhook, baton status text and JSON); baton resume after the fix pushes the kept work and completes', async () => {
    const repo = await createUserRepo(world.dir);
    const hook = await refusePushes(repo);
    const receiver = world.closeAfter(await startWebhookReceiver());
    const id = world.redis.projectId('frozen');
    const queued = await world.cli(['enqueue', '--project', id, '--goal', GOAL, '--repo', repo]);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);

    const worker = world.startWorker('worker-home', {
      BATON_CHAIN_DELAY_MS: '0',
      BATON_CHECKPOINT_INTERVAL_MS: '0',
      BATON_WEBHOOK_URL: receiver.url,
      BATON_WEBHOOK_SECRET: SECRET,
    });
    await worker.waitForOutput('"worker started"', 60_000);
    await receiver.received(1);
    const [paused] = bodies(receiver);
    expect(paused).toMatchObject({ type: 'project.paused', project: { id, status: 'paused' } });
    const reason = String(paused?.project.reason);
    expect(reason).toMatch(/^checkpoint_failed: checkpoint [0-9a-f]{12} was not pushed: /);
    expect(reason).toMatch(REFUSED);
    expect(branchExists(repo, `baton/${id}`)).toBe(false);

    const text = await world.cli(['status', id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`paused`);
    expect(text.stdout).toContain(reason);
    expect(text.stdout).toMatch(
      new RegExp(
        `checkpoint NOT PUSHED in session 1: .*${REFUSED.source} \\(committed in the worker's clone only; fix the remote, then baton resume\\)`,
      ),
    );
    expect(text.stdout).toMatch(/session 1 \(completed\): .* \(last not pushed\)/);
    const json = JSON.parse((await world.cli(['status', id, '--json'])).stdout) as {
      status: string;
      statusReason: string;
      sessionCommits: Array<{
        checkpoint: { pushed: boolean; head: string; error?: string };
        checkpointFailures: number;
      }>;
    };
    expect(json).toMatchObject({ status: 'paused', statusReason: reason });
    const first = json.sessionCommits[0];
    expect(first?.checkpoint.pushed).toBe(false);
    expect(first?.checkpoint.error).toMatch(REFUSED);
    expect(first?.checkpointFailures).toBeGreaterThan(0);
    const kept = first?.checkpoint.head ?? '';
    expect(kept).toMatch(/^[0-9a-f]{40}$/);

    // The cause is fixed; the worker that kept the commits pushes them, then the project completes.
    await rm(hook);
    const resumed = await world.cli(['resume', id]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    await receiver.received(2);
    expect(bodies(receiver)[1]).toMatchObject({
      type: 'project.completed',
      project: { id, status: 'completed' },
    });
    const head = git(repo, 'rev-parse', `baton/${id}`);
    expect(git(repo, 'merge-base', '--is-ancestor', kept, head)).toBe('');
    expect(git(repo, 'ls-tree', '-r', '--name-only', head).split('\n')).toEqual(
      expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f2.sh']),
    );
    const after = await world.cli(['status', id]);
    expect(after.stdout).toContain(
      'checkpoint of session 1 was not pushed then (pushed by a later session)',
    );
    expect(after.stdout).not.toContain('NOT PUSHED');
    expect(existsSync(path.join(world.dir, 'worker-home', 'git', `${id}.git`))).toBe(true);
  }, 300_000);
});
