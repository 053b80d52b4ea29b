/**
 * A checkpoint that cannot even be committed (not a refused push: git itself fails in the
 * worker's clone) never lets a project complete. A real `baton worker` runs the project's first
 * session on the strict simulator; while the model holds a request (`stallNextWork`) a stale
 * `index.lock` appears in the clone's git directory, as a killed git leaves one, so every later
 * `git add` fails. The session ends, the project pauses `checkpoint_failed`, a signed
 * `project.paused` webhook and `baton status` say so, the work is not on the branch, and the model
 * was told without a host path. `baton resume` then commits the work that stayed in the working
 * tree (preparing a clone clears stale locks), pushes it and completes: `project.completed`.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim, type SimScriptRequest } from '@baton/model-sim';
import { verifyWebhookSignature } from '@baton/projects';
import {
  createUserRepo,
  git,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { redisCliWorld } from './redis-fixtures.js';

const GOAL = 'Greeter\n- say hello\n- say goodbye';
const SECRET = 'whsec-uncommitted';

const world = redisCliWorld();

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

function branchExists(repo: string, branch: string): boolean {
  return git(repo, 'for-each-ref', `refs/heads/${branch}`) !== '';
}

describe('a worker whose checkpoint cannot be committed', () => {
  it('pauses checkpoint_failed (webhook, baton status), never completed; baton resume commits the kept work and completes', async () => {
    const repo = await createUserRepo(world.dir);
    const seen: SimScriptRequest[] = [];
    const sim = world.closeAfter(
      await startModelSim({ script: (request) => void seen.push(request) }),
    );
    const receiver = world.closeAfter(await startWebhookReceiver());
    const workerHome = path.join(world.dir, 'worker-home');
    const worker = world.start(['worker', '--port', '0'], {
      BATON_HOME: workerHome,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_CHAIN_DELAY_MS: '0',
      BATON_CHECKPOINT_INTERVAL_MS: '0',
      BATON_WEBHOOK_URL: receiver.url,
      BATON_WEBHOOK_SECRET: SECRET,
    });
    await worker.waitForOutput('"worker started"', 60_000);
    const id = world.redis.projectId('nocommit');
    const queued = await world.cli(['enqueue', '--project', id, '--goal', GOAL, '--repo', repo]);
    expect(queued.stderr).toBe('');
    expect(queued.code).toBe(0);

    // Hold the session mid-work: its clone is prepared, then git's index lock is left behind.
    sim.setFaults({ stallNextWork: 1 });
    await sim.waitForStalled(1, 90_000);
    const gitDir = path.join(workerHome, 'git', `${id}.git`);
    expect(existsSync(path.join(gitDir, 'HEAD'))).toBe(true);
    await writeFile(path.join(gitDir, 'index.lock'), '');
    sim.releaseStalls();

    await receiver.received(1);
    const [paused] = bodies(receiver);
    expect(paused).toMatchObject({ type: 'project.paused', project: { id, status: 'paused' } });
    const reason = String(paused?.project.reason);
    expect(reason).toMatch(/^checkpoint_failed: the last checkpoint could not be saved: /);
    expect(reason).toContain('index.lock');
    expect(reason.split('\n')).toHaveLength(1);
    // Nothing of the session's work reached the branch.
    const head = branchExists(repo, `baton/${id}`) ? git(repo, 'rev-parse', `baton/${id}`) : null;
    if (head !== null) {
      expect(git(repo, 'ls-tree', '-r', '--name-only', head).split('\n')).not.toContain(
        'features/f2.sh',
      );
    }

    const text = await world.cli(['status', id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(reason);
    expect(text.stdout).toMatch(
      /checkpoint FAILED in session 1: .*index\.lock.* \(its last changes are not on the branch; fix the cause, then baton resume\)/,
    );
    const json = JSON.parse((await world.cli(['status', id, '--json'])).stdout) as {
      status: string;
      sessionCommits: Array<{ checkpointError: string | null; checkpointFailures: number }>;
    };
    expect(json.status).toBe('paused');
    expect(json.sessionCommits[0]?.checkpointError).toContain('index.lock');
    expect(json.sessionCommits[0]?.checkpointFailures).toBeGreaterThan(0);

    // The model was told, after its tool results, and never saw a host path.
    const told = JSON.stringify(seen.map((request) => request.params.messages));
    expect(told).toContain('The checkpoint of your workspace failed');
    const leak = told.indexOf(workerHome);
    expect(leak === -1 ? '' : told.slice(Math.max(0, leak - 400), leak + 200)).toBe('');
    expect(told).not.toContain(workerHome);
    expect(told).not.toContain(world.dir);

    // The fix: a new preparation clears the stale lock; the kept work is committed and pushed.
    const resumed = await world.cli(['resume', id]);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    await receiver.received(2);
    expect(bodies(receiver)[1]).toMatchObject({
      type: 'project.completed',
      project: { id, status: 'completed' },
    });
    const final = git(repo, 'rev-parse', `baton/${id}`);
    expect(git(repo, 'ls-tree', '-r', '--name-only', final).split('\n')).toEqual(
      expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f2.sh']),
    );
    expect(existsSync(path.join(gitDir, 'index.lock'))).toBe(false);
  }, 300_000);
});
