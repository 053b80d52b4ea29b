/**
 * Through the dashboard a project's `repo` and `workspace` come only from what the operator
 * allowed (BATON_REPO_HOSTS, BATON_REPO_ROOTS, BATON_WORKSPACE_ROOT; closed by default): the
 * dashboard never contacts a URL a client gave unless its host is allowed (a canary HTTP server
 * on this machine counts every request), a local path outside the roots is refused before
 * anything reads it, every "cannot read" reads the same, and a workspace is only ever a
 * directory under the workspace root (default BATON_HOME).
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cannotRead } from '@baton/projects';
import { createUserRepo, randomHex } from '@baton/test-support';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

const VARIABLES = ['BATON_REPO_HOSTS', 'BATON_REPO_ROOTS', 'BATON_WORKSPACE_ROOT'] as const;
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));

let dashboard: TestDashboard | undefined;
let canary: Server;
let canaryHits = 0;
let canaryUrl: string;
let scratch: string;
let allowedRoot: string;
let allowedRepo: string;

beforeAll(async () => {
  canary = createServer((_request, response) => {
    canaryHits++;
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/repo.git`;
  scratch = await mkdtemp(path.join(tmpdir(), 'baton-sources-'));
  allowedRoot = path.join(scratch, 'allowed');
  await mkdir(allowedRoot);
  allowedRepo = await createUserRepo(allowedRoot);
});

afterAll(async () => {
  await new Promise((resolve) => canary.close(resolve));
  await rm(scratch, { recursive: true, force: true });
});

afterEach(async () => {
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  await dashboard?.close();
  dashboard = undefined;
});

async function create(body: Record<string, unknown>): Promise<{ status: number; message: string }> {
  const response = await dashboard!.request('/api/projects', {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: dashboard!.server.url },
    body: JSON.stringify({ id: `src-${randomHex(3)}`, goal: '- one', ...body }),
  });
  const answer = (await response.json()) as { error?: { message: string } };
  return { status: response.status, message: answer.error?.message ?? '' };
}

async function startWith(variables: Partial<Record<(typeof VARIABLES)[number], string>>) {
  for (const name of VARIABLES) delete process.env[name];
  Object.assign(process.env, variables);
  dashboard = await startTestDashboard({ home: path.join(scratch, 'home') });
}

describe('repositories by policy', () => {
  it('contacts no client-given URL by default, nor a local one with BATON_REPO_HOSTS=*', async () => {
    await startWith({});
    const refused = await create({ repo: canaryUrl });
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('BATON_REPO_HOSTS');
    expect((await create({ repo: 'ext::sh -c touch% /tmp/pwned' })).status).toBe(400);
    await dashboard!.close();
    await startWith({ BATON_REPO_HOSTS: '*' });
    expect((await create({ repo: canaryUrl })).status).toBe(400);
    expect((await create({ repo: 'http://localhost:9/x.git' })).status).toBe(400);
    expect((await create({ repo: 'http://[::1]:9/x.git' })).status).toBe(400);
    expect((await create({ repo: 'git@10.0.0.7:x.git' })).status).toBe(400);
    expect(canaryHits).toBe(0);
    // Listed by name, the operator's choice: then it is contacted.
    await dashboard!.close();
    await startWith({ BATON_REPO_HOSTS: 'github.com,127.0.0.1' });
    expect((await create({ repo: canaryUrl })).status).toBe(400);
    expect(canaryHits).toBeGreaterThan(0);
  });

  it("refuses every local repository by default, Baton's own checkout included", async () => {
    await startWith({});
    const own = fileURLToPath(new URL('../../..', import.meta.url));
    for (const repo of [allowedRepo, own, '.']) {
      const answer = await create({ repo });
      expect(answer.status).toBe(400);
      expect(answer.message).toContain('BATON_REPO_ROOTS');
    }
  });

  it('takes a repository under BATON_REPO_ROOTS and reads every failure the same', async () => {
    await startWith({ BATON_REPO_ROOTS: allowedRoot });
    expect((await create({ repo: allowedRepo })).status).toBe(201);
    const plain = path.join(allowedRoot, 'plain');
    await mkdir(plain, { recursive: true });
    const file = path.join(allowedRoot, 'file.txt');
    await writeFile(file, 'not a repository');
    await mkdir(path.join(scratch, 'outside'), { recursive: true });
    const outside = await createUserRepo(path.join(scratch, 'outside'));
    const escape = path.join(allowedRoot, 'escape');
    await symlink(outside, escape).catch(() => undefined);
    for (const repo of [path.join(allowedRoot, 'missing'), plain, file, escape]) {
      const answer = await create({ repo });
      expect(answer, repo).toEqual({ status: 400, message: cannotRead(repo) });
    }
  });
});

describe('workspaces by policy', () => {
  it('accepts a workspace only under the workspace root (default BATON_HOME)', async () => {
    await startWith({});
    const home = path.join(scratch, 'home');
    const outside = path.join(scratch, 'users-own-dir');
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, '.bashrc'), 'export TOKEN=canary\n');
    for (const workspace of [outside, home, path.join(home, '..', 'elsewhere'), '/']) {
      const answer = await create({ workspace });
      expect(answer.status, workspace).toBe(400);
      expect(answer.message).toContain('BATON_WORKSPACE_ROOT');
    }
    const escape = path.join(home, 'link');
    await mkdir(home, { recursive: true });
    await symlink(outside, escape).catch(() => undefined);
    expect((await create({ workspace: path.join(escape, 'w') })).status).toBe(400);
    expect((await create({ workspace: path.join(home, 'workspaces', 'mine') })).status).toBe(201);
  });

  it('uses BATON_WORKSPACE_ROOT when set', async () => {
    const root = path.join(scratch, 'root');
    await mkdir(root, { recursive: true });
    await startWith({ BATON_WORKSPACE_ROOT: root });
    expect((await create({ workspace: path.join(root, 'a') })).status).toBe(201);
    expect((await create({ workspace: path.join(scratch, 'home', 'b') })).status).toBe(400);
  });
});
