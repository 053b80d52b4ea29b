import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createBatonControl, sourcePolicyFromEnvironment } from '@baton/projects';
import { REDIS_URL, createUserRepo } from '@baton/test-support';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

/**
 * `baton enqueue` applies the operator's source policy when its variables are set, exactly as
 * the dashboard does (the one control API): a `--repo` URL whose host is not in BATON_REPO_HOSTS
 * is refused before anything contacts it (a canary server counts requests), a local repository
 * outside BATON_REPO_ROOTS is refused naming that rule, and nothing is created or queued; one
 * inside the roots is accepted.
 */

const world = redisCliWorld();

let canary: Server;
let canaryHits = 0;
let canaryUrl: string;
beforeEach(async () => {
  canaryHits = 0;
  canary = createServer((_request, response) => {
    canaryHits++;
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/repo.git`;
});
afterEach(async () => {
  await new Promise((resolve) => canary.close(resolve));
});

describe('baton enqueue under BATON_REPO_HOSTS / BATON_REPO_ROOTS', () => {
  it('refuses a repository the policy does not allow, contacts nothing, creates nothing; accepts one it allows', async () => {
    const { redis } = world;
    const allowedRoot = path.join(world.dir, 'allowed');
    const elsewhere = path.join(world.dir, 'elsewhere');
    await mkdir(allowedRoot);
    await mkdir(elsewhere);
    const inside = await createUserRepo(allowedRoot);
    const outside = await createUserRepo(elsewhere);
    const policy = { BATON_REPO_HOSTS: 'github.com', BATON_REPO_ROOTS: allowedRoot };
    for (const repo of [canaryUrl, outside]) {
      const id = redis.projectId('refused');
      const result = await world.cli(
        ['enqueue', '--project', id, '--goal', 'x', '--repo', repo],
        policy,
      );
      expect(result.code, repo).toBe(2);
      const line = oneLine(result.stderr);
      expect(line, repo).toMatch(/^baton: /u);
      // The CLI acts for the user on their own machine: it may say which rule refused.
      expect(line, repo).toMatch(
        repo === outside ? /must be under BATON_REPO_ROOTS/u : /BATON_REPO_HOSTS/u,
      );
      expect(await redis.control.getProject(id)).toBeNull();
    }
    expect(canaryHits).toBe(0);
    expect((await redis.control.queueCounts()).waiting).toBe(0);

    const id = redis.projectId('allowed');
    const accepted = await world.cli(
      ['enqueue', '--project', id, '--goal', 'x', '--repo', inside],
      policy,
    );
    expect(accepted.stderr).toBe('');
    expect(accepted.code).toBe(0);
    expect((await redis.control.getProject(id))?.repo).toBe(inside);
  }, 120_000);
});

describe('baton enqueue and the control API under BATON_WORKSPACE_ROOT', () => {
  it('refuse a workspace outside the root (directly, through a symlink, the root itself), touch nothing, create nothing; accept one under it', async () => {
    const { redis } = world;
    const root = path.join(world.dir, 'workspaces');
    const elsewhere = path.join(world.dir, 'elsewhere');
    await mkdir(root);
    await mkdir(elsewhere);
    const canary = path.join(elsewhere, '.bashrc');
    await writeFile(canary, 'export TOKEN=canary-bashrc-5e1a\n');
    await symlink(elsewhere, path.join(root, 'escape'));
    const policy = { BATON_WORKSPACE_ROOT: root };
    for (const workspace of [elsewhere, path.join(root, 'escape'), root, '/']) {
      const id = redis.projectId('outside');
      const result = await world.cli(
        ['enqueue', '--project', id, '--goal', 'x', '--workspace', workspace, '--adopt'],
        policy,
      );
      expect(result.code, workspace).toBe(2);
      expect(oneLine(result.stderr), workspace).toMatch(
        /^baton: .*a workspace must be a directory under the workspace root \(BATON_WORKSPACE_ROOT\)/u,
      );
      // Refused before the directory is looked at: no adoption preview of its files.
      expect(result.stdout, workspace).not.toContain('.bashrc');
      expect(await redis.control.getProject(id)).toBeNull();
    }
    expect((await redis.control.queueCounts()).waiting).toBe(0);

    // The control API a server builds from the same variables refuses it the same way.
    const served = world.closeAfter(
      createBatonControl({
        url: REDIS_URL,
        prefix: redis.prefix,
        cwd: world.dir,
        sourcePolicy: sourcePolicyFromEnvironment(
          { BATON_WORKSPACE_ROOT: root },
          { served: true, home: root },
        ),
      }),
    );
    const refused = redis.projectId('api-outside');
    await expect(
      served.createProject({ id: refused, goal: 'x', workspace: elsewhere, adoptWorkspace: true }),
    ).rejects.toThrow(/a workspace must be a directory under the workspace root/u);
    expect(await redis.control.getProject(refused)).toBeNull();
    expect(await readFile(canary, 'utf8')).toBe('export TOKEN=canary-bashrc-5e1a\n');
    expect(await readdir(elsewhere)).toEqual(['.bashrc']);

    const id = redis.projectId('inside');
    const accepted = await world.cli(
      ['enqueue', '--project', id, '--goal', 'x', '--workspace', path.join(root, 'p1')],
      policy,
    );
    expect(accepted.stderr).toBe('');
    expect(accepted.code).toBe(0);
    expect((await redis.control.getProject(id))?.workspace).toBe(path.join(root, 'p1'));
  }, 120_000);
});
