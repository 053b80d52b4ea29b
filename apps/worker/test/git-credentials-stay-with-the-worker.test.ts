import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SimScriptRequest } from '@baton/model-sim';
import { createUserRepo, git, REDIS_URL } from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from './support/git-http-server.js';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

// Each test runs whole projects through worker processes and git: minutes on a loaded 2-core machine.
vi.setConfig({ testTimeout: 240_000 });

const CANARY = 'gitpw-CANARY-7f3a91c2e4b8';

/** The worker's own git configuration: a credential helper that knows the password. */
const CREDENTIAL_ENV = {
  GIT_CONFIG_COUNT: '1',
  GIT_CONFIG_KEY_0: 'credential.helper',
  GIT_CONFIG_VALUE_0: `!f() { test "$1" = get && echo username=baton && echo password=${CANARY}; }; f`,
};

/** Commands an agent would try to find the credentials with (one tool call each). */
const PROBES = [
  'env',
  'git config --list --show-origin',
  'printf "protocol=http\\nhost=127.0.0.1\\n\\n" | git credential fill',
  `python3 -c "import glob; [print(open(p, 'rb').read()) for p in glob.glob('/pro' + 'c/*/environ')]"`,
  `python3 -c "import os; import pwd; h = pwd.getpwuid(os.getuid()).pw_dir; print(os.listdir(h), [open(h + '/' + n).read() for n in ('.gitconfig', '.git-credentials') if os.path.exists(h + '/' + n)])"`,
];

/** Every value under a key prefix, as text, read by type (DUMP may compress values). */
async function readPrefix(prefix: string): Promise<string> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const parts: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        const value =
          type === 'string'
            ? await redis.get(key)
            : type === 'hash'
              ? await redis.hgetall(key)
              : type === 'list'
                ? await redis.lrange(key, 0, -1)
                : type === 'set'
                  ? await redis.smembers(key)
                  : type === 'zset'
                    ? await redis.zrange(key, '0', '-1')
                    : type === 'stream'
                      ? await redis.xrange(key, '-', '+')
                      : `(${type})`;
        parts.push(key, JSON.stringify(value));
      }
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return parts.join('\n');
}

/** Every file under a directory, as text. */
async function readTree(dir: string): Promise<string> {
  const parts: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    parts.push(file, await readFile(file, 'latin1'));
  }
  return parts.join('\n');
}

describe("git credentials come from the worker's own git configuration and stay there", () => {
  const requests: string[] = [];
  let firstRequests = 0;
  let probed = false;
  const world = useProcessWorld('baton-git-creds-', {
    script: (request: SimScriptRequest) => {
      requests.push(JSON.stringify(request.params));
      // The second session's first turn (its workspace is a clone by then): look for the password.
      if (request.params.messages.length !== 1 || ++firstRequests !== 2) return undefined;
      probed = true;
      return {
        content: PROBES.map((command) => ({ type: 'tool_use', name: 'bash', input: { command } })),
      };
    },
  });
  let root: string;
  let server: GitHttpServer | null = null;
  beforeEach(async () => {
    requests.length = 0;
    firstRequests = 0;
    probed = false;
    root = await mkdtemp(path.join(os.tmpdir(), 'baton-git-creds-'));
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    await rm(root, { recursive: true, force: true });
  });

  it('a project on an HTTP remote that wants a password: pushes work, and the password is in no record, event, log, memory, clone or model request', async () => {
    const { prefix, control, sim, workers, projects } = world;
    const user = await createUserRepo(root);
    await mkdir(path.join(root, 'srv'));
    const bare = path.join(root, 'srv', 'app.git');
    git(root, 'clone', '-q', '--bare', user, bare);
    server = await startGitHttpServer({
      root: path.join(root, 'srv'),
      username: 'baton',
      password: CANARY,
    });
    const repo = `${server.url}/app.git`;

    // Creation reads the remote too (its default branch): the control API's process has the helper.
    const id = randomProjectId('creds');
    projects.push(id);
    Object.assign(process.env, CREDENTIAL_ENV);
    try {
      await control.createProject({ id, goal: 'Greeter\n- say hello\n- say goodbye', repo });
    } finally {
      for (const key of Object.keys(CREDENTIAL_ENV)) delete process.env[key];
    }

    const home = path.join(root, 'worker-home');
    const worker = await spawnWorker({
      ...simWorkerEnv({ prefix, simUrl: sim.url }, { BATON_CHECKPOINT_INTERVAL_MS: '0' }),
      ...CREDENTIAL_ENV,
      BATON_HOME: home,
    });
    workers.push(worker);
    await control.enqueue(id);
    const done = await waitForCompleted(control, id, 120_000);

    // The credentials worked: the branch reached the remote through authorised pushes only.
    expect(git(bare, 'rev-parse', `baton/${id}`)).toBe(done.lastCheckpoint);
    expect(git(bare, 'show', `baton/${id}:features/f2.sh`)).toContain('F2 ok');
    const pushes = server.requests.filter((entry) => entry.path.endsWith('/git-receive-pack'));
    expect(pushes.length).toBeGreaterThan(0);
    expect(pushes.every((entry) => entry.authorized)).toBe(true);
    expect(server.requests.some((entry) => !entry.authorized)).toBe(true); // challenged first

    // The agent really went looking: its probe ran and its output came back to the model.
    expect(probed).toBe(true);
    const answered = requests.find(
      (text) => text.includes('git credential fill') && text.includes('tool_result'),
    );
    // env ran in the sandbox: its PATH line came back to the model.
    expect(answered).toMatch(/PATH=/);

    // ...and found nothing, nor does anything Baton stored or printed hold the password.
    for (const text of requests) expect(text).not.toContain(CANARY);
    expect(await readPrefix(prefix)).not.toContain(CANARY);
    const events = await control.readEvents(id, { count: 10_000 });
    expect(JSON.stringify(events)).not.toContain(CANARY);
    expect(JSON.stringify(await control.getProject(id))).not.toContain(CANARY);
    expect(JSON.stringify(worker.logs)).not.toContain(CANARY);
    expect(worker.stderr).not.toContain(CANARY);
    // Baton's clone (working tree and its git directory) keeps no credential either.
    const stored = await readTree(home);
    expect(stored).toContain(`url = ${repo}`); // the clone's config was read: its remote is there
    expect(stored).not.toContain(CANARY);
  });
});
