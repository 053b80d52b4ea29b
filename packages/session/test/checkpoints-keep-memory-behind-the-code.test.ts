import { execFileSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScriptRequest } from '@baton/model-sim';
import { openProjectWorkspace } from '@baton/workspace';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
}

function requestText(request: SimScriptRequest): string {
  const messages: BetaMessageParam[] = request.params.messages;
  return JSON.stringify(messages);
}

describe('checkpoints during a session', () => {
  it('push the workspace changes before the memory write that follows them (the flip)', async () => {
    harness = await createHarness({}, { initialised: true });
    const h = harness;
    const result = await runSession(
      h.options({
        sessionNumber: 2,
        checkpoints: { target: h.projectWorkspace!, intervalMs: 600_000 },
      }),
    );
    expect(result.flippedFeatures).toEqual(['F1']);
    const order = h.events.flatMap((event) =>
      event.type === 'checkpoint'
        ? [
            `checkpoint:${event.reason}:${event.commit === null ? 'none' : 'commit'}:${event.pushed}`,
          ]
        : event.type === 'memory-change' && event.change.path.endsWith('features.json')
          ? ['flip']
          : [],
    );
    // The interval is long, so the only reason to checkpoint before the flip is the flip itself.
    expect(order.slice(0, 2)).toEqual(['checkpoint:memory:commit:true', 'flip']);
    const first = h.events.find((event) => event.type === 'checkpoint');
    expect(first?.type === 'checkpoint' && first.commit).toBeTruthy();
    const remote = path.join(h.dir, 'remotes', 'todo.git');
    expect(
      git(h.dir, '--git-dir', remote, 'show', `${result.commits[0]}:features/f1.sh`),
    ).toContain('F1 ok');
  });

  it('with interval 0 checkpoint after every turn that touched the workspace', async () => {
    harness = await createHarness({}, { initialised: true });
    const h = harness;
    await runSession(
      h.options({ sessionNumber: 2, checkpoints: { target: h.projectWorkspace!, intervalMs: 0 } }),
    );
    const reasons = h.events.flatMap((event) =>
      event.type === 'checkpoint' ? [event.reason] : [],
    );
    expect(reasons[0]).toBe('turn');
    expect(reasons).toContain('end');
  });

  it("tell the model when the repository's hooks refuse, and the work is saved anyway", async () => {
    const seen: SimScriptRequest[] = [];
    harness = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    const h = harness;
    const repo = path.join(h.dir, 'user-repo');
    await mkdir(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(
      repo,
      '-c',
      'user.name=U',
      '-c',
      'user.email=u@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'init',
    );
    const hook = path.join(repo, '.git', 'hooks', 'pre-commit');
    await writeFile(hook, '#!/bin/sh\necho "lint: trailing whitespace in features/" >&2\nexit 1\n');
    await chmod(hook, 0o755);
    const workspace = openProjectWorkspace({
      home: path.join(h.dir, 'home'),
      projectId: 'todo',
      repo,
      baseCommit: git(repo, 'rev-parse', 'HEAD'),
    });
    await workspace.prepare(null);
    const result = await runSession(
      h.options({
        sessionNumber: 2,
        workspace: workspace.dir,
        checkpoints: { target: workspace, intervalMs: 0 },
      }),
    );
    expect(result.outcome).toBe('completed');
    const refused = h.events.filter(
      (event) => event.type === 'checkpoint' && event.hooks === 'refused',
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(seen.some((request) => requestText(request).includes('refused by the repository'))).toBe(
      true,
    );
    expect(
      seen.some((request) =>
        requestText(request).includes('lint: trailing whitespace in features/'),
      ),
    ).toBe(true);
    expect(git(repo, 'log', '--format=%B', 'baton/todo')).toContain(
      'Baton-Hooks: refused (lint: trailing whitespace in features/)',
    );
    expect(git(repo, 'show', 'baton/todo:features/f1.sh')).toContain('F1 ok');
  });

  it('stop the session when the remote rejects a push as not a fast-forward', async () => {
    harness = await createHarness({}, { initialised: true });
    const h = harness;
    const remote = path.join(h.dir, 'remotes', 'todo.git');
    // Someone else pushes to the project's branch before the session's first checkpoint.
    const other = path.join(h.dir, 'other');
    await mkdir(other);
    git(other, 'init', '-q');
    git(
      other,
      '-c',
      'user.name=U',
      '-c',
      'user.email=u@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'theirs',
    );
    git(other, 'push', '-q', remote, 'HEAD:refs/heads/baton/todo');
    const result = await runSession(
      h.options({ sessionNumber: 2, checkpoints: { target: h.projectWorkspace!, intervalMs: 0 } }),
    );
    expect(result).toMatchObject({ outcome: 'failed', stopReason: 'push_rejected' });
    expect(result.reason).toMatch(/never force-pushes/);
    expect(result.flippedFeatures).toEqual([]);
    expect(git(h.dir, '--git-dir', remote, 'log', '--format=%s', 'baton/todo')).toBe('theirs');
  });
});
