/// <reference lib="dom" />
/* eslint-disable @typescript-eslint/no-explicit-any -- JSON bodies: the assertions are the type checks */
/**
 * A checkpoint the remote refuses, as the dashboard shows it: a real in-process worker runs the
 * project's sessions on the model simulator against a user repository whose server-side hook
 * accepts the project branch's creation and refuses every later push. The project pauses
 * `checkpoint_failed`; the project view carries the reason (the remote's words) and the last
 * checkpoint the branch has, the session rows say which checkpoint failed, in red in the page.
 * After the hook is removed, Resume pushes the kept work and the project completes.
 */
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUserRepo, git, randomHex, waitFor } from '@baton/test-support';
import { chromiumAvailable, launchTestBrowser, type TestBrowser } from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { startSimWorker, type SimWorker } from './support/sim-worker.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
const GOAL = 'Greeter\n- say hello\n- say goodbye\n- say welcome';
const POLICY = 'policy: baton branches are frozen until Monday';
/** What a refused push says wherever it is reported. */
const REFUSED =
  /refused the push of baton\/[\w-]+: \[remote rejected\] \(pre-receive hook declined\) \(the remote said: policy: baton branches are frozen until Monday\)/;

/** The server-side hook: a new branch is accepted, every update of an existing one refused. */
async function freezeBranchesOnceCreated(repo: string): Promise<string> {
  const hook = path.join(repo, '.git', 'hooks', 'pre-receive');
  await writeFile(
    hook,
    `#!/bin/sh\nwhile read old new ref; do\n  case "$old" in 0000000000000000000000000000000000000000) ;; *) echo "${POLICY}" >&2; exit 1 ;; esac\ndone\nexit 0\n`,
  );
  await chmod(hook, 0o755);
  return hook;
}

describe('checkpoint failures in the dashboard', () => {
  let dashboard: TestDashboard;
  let worker: SimWorker;
  let root: string;

  beforeAll(async () => {
    dashboard = await startTestDashboard();
    worker = await startSimWorker({
      prefix: dashboard.prefix,
      memoryPrefix: dashboard.memoryPrefix,
    });
    root = dashboard.workspaceRoot;
  }, 60_000);

  afterAll(async () => {
    await worker?.stop();
    await dashboard?.close();
  });

  /** A project on a repository whose remote freezes its branch after the first push, queued. */
  async function frozenProject(name: string): Promise<{ id: string; repo: string; hook: string }> {
    const id = `${name}-${randomHex(3)}`;
    const parent = path.join(root, id);
    await mkdir(parent);
    const repo = await createUserRepo(parent);
    const hook = await freezeBranchesOnceCreated(repo);
    await dashboard.control.createProject({ id, goal: GOAL, repo });
    await dashboard.control.enqueue(id);
    return { id, repo, hook };
  }

  async function settled(id: string, status: string) {
    return waitFor(
      `project ${id} ${status}`,
      async () => {
        const project = await dashboard.control.getProject(id);
        if (project?.status === 'failed' || project?.status === 'completed') {
          if (project.status !== status) throw new Error(`${id} ended ${project.status}`);
        }
        return project?.status === status ? project : undefined;
      },
      150_000,
    );
  }

  it('GET /api/projects/:id carries the refusal and the last good checkpoint; the sessions say which failed; resume clears it', async () => {
    const { id, repo, hook } = await frozenProject('api');
    await settled(id, 'paused');
    const lastGood = git(repo, 'rev-parse', `baton/${id}`);

    const { status, body } = await dashboard.json(`/api/projects/${id}`);
    expect(status).toBe(200);
    const project = body.project ?? body;
    expect(project.status).toBe('paused');
    expect(project.statusReason).toMatch(
      /^checkpoint_failed: checkpoint [0-9a-f]{12} was not pushed: /,
    );
    expect(project.statusReason).toMatch(REFUSED);
    expect(project.checkpointFailure).toEqual({ reason: project.statusReason, lastGood });
    expect(project.lastCheckpoint).toBe(lastGood);

    const sessions = (await dashboard.json(`/api/projects/${id}/sessions`)).body.sessions as any[];
    const last = sessions.at(-1);
    expect(last.checkpoint.pushed).toBe(false);
    expect(last.checkpoint.error).toMatch(REFUSED);
    expect(last.checkpointFailures).toBeGreaterThan(0);

    await rm(hook);
    const resumed = await dashboard.request(`/api/projects/${id}/resume`, {
      method: 'POST',
      headers: { origin: dashboard.server.url },
    });
    expect(resumed.status).toBe(200);
    await settled(id, 'completed');
    const after = (await dashboard.json(`/api/projects/${id}`)).body;
    expect((after.project ?? after).checkpointFailure).toBeNull();
    expect(git(repo, 'ls-tree', '-r', '--name-only', `baton/${id}`).split('\n')).toEqual(
      expect.arrayContaining(['init.sh', 'features/f1.sh', 'features/f3.sh']),
    );
  }, 240_000);

  describe.skipIf(!chromiumAvailable)('in the browser', () => {
    let browser: TestBrowser;
    beforeAll(async () => {
      await mkdir(ARTIFACTS, { recursive: true });
      browser = await launchTestBrowser();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
    });

    it('shows the failure in red on the project page, with the last good checkpoint; Resume clears it once the remote accepts', async () => {
      const { page } = browser;
      const { id, repo, hook } = await frozenProject('page');
      await page.goto(new URL(`/projects/${id}`, dashboard.server.url).toString());
      // The page learns of the pause from its stream: no reload.
      const alert = '[data-testid=checkpoint-failed]';
      await page.waitForSelector(alert, { timeout: 150_000 });
      const lastGood = git(repo, 'rev-parse', `baton/${id}`);
      const text = (await page.textContent(alert)) ?? '';
      expect(text).toMatch(/^Checkpoint failed: the latest work is not on the branch\. /);
      expect(text).toMatch(/checkpoint_failed: checkpoint [0-9a-f]{12} was not pushed: /);
      expect(text).toMatch(REFUSED);
      expect(await page.textContent('[data-testid=last-good-checkpoint]')).toBe(
        ` · last good checkpoint: ${lastGood.slice(0, 12)} · fix the cause, then Resume.`,
      );
      expect(await page.getAttribute(alert, 'role')).toBe('alert');
      // Red: the colour the page uses for failures.
      const [color, fail] = await page.$eval(alert, (element) => [
        getComputedStyle(element).color,
        getComputedStyle(document.documentElement).getPropertyValue('--fail').trim(),
      ]);
      expect(fail).not.toBe('');
      const probe = await page.evaluate((value) => {
        const span = document.createElement('span');
        span.style.color = value;
        document.body.append(span);
        const resolved = getComputedStyle(span).color;
        span.remove();
        return resolved;
      }, fail);
      expect(color).toBe(probe);
      await page.waitForSelector('[data-testid=session-checkpoint-failed]');
      const sessionMarks = await page.$$eval('[data-testid=session-checkpoint-failed]', (marks) =>
        marks.map((mark) => [mark.textContent ?? '', mark.getAttribute('title') ?? '']),
      );
      expect(sessionMarks).toContainEqual([
        ' · checkpoint not pushed',
        expect.stringMatching(REFUSED),
      ]);
      await page.screenshot({
        path: path.join(ARTIFACTS, 'dashboard-checkpoint-failed.png'),
        fullPage: true,
      });

      await rm(hook);
      await page.click('[data-action=resume]');
      await settled(id, 'completed');
      await page.waitForSelector(alert, { state: 'detached', timeout: 30_000 });
      expect(browser.pageErrors).toEqual([]);
    }, 300_000);
  });
});
