/// <reference lib="dom" />
/**
 * Browser tests: Debian's /usr/bin/chromium driven by playwright-core against a dashboard whose
 * projects run on the model simulator through a real in-process worker.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_PRESET_NAMES, DEFAULT_CONTEXT_PRESET } from '@baton/context-config';
import { checkoutFingerprint, createUserRepo, git, randomHex } from '@baton/test-support';
import { sanitizeRenderedHtml } from '../src/internal/markdown.js';
import { HOSTILE_INPUTS, HOSTILE_MARKDOWN } from './fixtures/hostile.js';
import {
  activeContent,
  CHROMIUM,
  chromiumAvailable,
  INERT,
  launchTestBrowser,
  type TestBrowser,
} from './support/browser.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';
import { seedSession } from './support/seed.js';
import { startSimWorker, type SimWorker } from './support/sim-worker.js';

const ARTIFACTS = fileURLToPath(new URL('../test-artifacts/', import.meta.url));
if (!chromiumAvailable) {
  console.warn(
    `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium; CI installs it)`,
  );
}

describe.skipIf(!chromiumAvailable)('the dashboard in a real browser', () => {
  let dashboard: TestDashboard;
  let worker: SimWorker;
  let browser: TestBrowser;
  let page: Page;

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    // The repository test's checkout is made under the temporary directory: the operator allows
    // local repositories there (the dashboard allows none by default).
    process.env.BATON_REPO_ROOTS = tmpdir();
    dashboard = await startTestDashboard({ withQueueBoard: true });
    worker = await startSimWorker({
      prefix: dashboard.prefix,
      memoryPrefix: dashboard.memoryPrefix,
      // Slow enough to watch the features bar move, fast enough for a test.
      faults: { latencyMs: 60 },
    });
    browser = await launchTestBrowser({ acceptConfirm: true });
    page = browser.page;
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await worker?.stop();
    await dashboard?.close();
  });

  const url = (pathname: string) => new URL(pathname, dashboard.server.url).toString();
  const shot = (name: string) =>
    page.screenshot({ path: path.join(ARTIFACTS, `dashboard-${name}.png`), fullPage: true });

  it('creates a project from the form and watches its features bar fill live', async () => {
    const id = `ui-${randomHex(3)}`;
    await page.goto(url('/new'));
    // The preset select is the server's list, the one @baton/context-config owns.
    await page.waitForSelector('select[name=contextPreset][data-loaded="true"]', {
      state: 'attached',
    });
    const presetSelect = page.locator('select[name=contextPreset]');
    expect(
      await presetSelect
        .locator('option')
        .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value)),
    ).toEqual([...CONTEXT_PRESET_NAMES]);
    expect(await presetSelect.inputValue()).toBe(DEFAULT_CONTEXT_PRESET);
    await page.fill('input[name=id]', id);
    await page.fill(
      'textarea[name=goal]',
      'Build a tiny calculator\n- add two numbers\n- subtract two numbers\n- multiply two numbers',
    );
    await page.selectOption('select[name=contextPreset]', 'coding');
    await page.fill('input[name=maxSessions]', '10');
    await page.fill('input[name=fallbackModel]', 'claude-haiku-4-5');
    await shot('new-project');
    await page.click('[data-testid=create-form] button[type=submit]');
    await page.waitForURL(`**/projects/${id}`);
    expect((await dashboard.control.getProject(id))?.fallbackModel).toBe('claude-haiku-4-5');

    await page.goto(url('/'));
    await page.evaluate(() => {
      (window as unknown as { __sameDocument: boolean }).__sameDocument = true;
    });
    const bar = `[data-testid="features-${id}"]`;
    // Record every value the bar shows, as the page receives updates.
    await page.evaluate((selector) => {
      const seen: string[] = [];
      (window as unknown as { __barValues: string[] }).__barValues = seen;
      const record = () => {
        const element = document.querySelector(selector) as HTMLElement | null;
        const value = element ? `${element.dataset.passing}/${element.dataset.total}` : 'none';
        if (seen[seen.length - 1] !== value) seen.push(value);
      };
      new MutationObserver(record).observe(document.body, {
        subtree: true,
        childList: true,
        attributes: true,
      });
      record();
    }, bar);
    await page.waitForFunction(
      (selector) =>
        (document.querySelector(selector) as HTMLElement | null)?.dataset.passing === '3',
      bar,
      {
        timeout: 45_000,
      },
    );
    await page.waitForSelector(`tr[data-project="${id}"][data-status="completed"]`, {
      timeout: 15_000,
    });
    const values = await page.evaluate(
      () => (window as unknown as { __barValues: string[] }).__barValues,
    );
    expect(values).toEqual(expect.arrayContaining(['1/3', '2/3', '3/3']));
    // Still the same document: the page updated without a reload.
    expect(
      await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument),
    ).toBe(true);
    expect(await page.textContent(`${bar} .bar-label`)).toBe('3/3');
    await shot('projects');

    // The project page: progress log, checklist, memory history with a diff.
    await page.click(`a.project-link[href="/projects/${id}"]`);
    await page.waitForSelector(
      '[data-testid=progress-log] h1, [data-testid=progress-log] h2, [data-testid=progress-log] p',
    );
    expect(await page.textContent('[data-testid=progress-log]')).toMatch(/Session/);
    // The context config stored at creation: preset, edits, caching and its TTL.
    expect(await page.textContent('dt:text-is("Context") + dd')).toBe(
      'coding · edits clear_tool_uses · cache on (ttl 5m)',
    );
    await page.waitForSelector('tr[data-feature="F3"][data-passes="true"]');
    await page.waitForSelector('[data-testid=token-chart] circle');
    await page.waitForSelector('[data-testid=event-tail] li');
    await page.click('button.file-link[data-path="/memories/features.json"]');
    await page.waitForSelector('[data-testid=memory-history] li');
    const versions = await page.locator('[data-testid=memory-history] li').count();
    expect(versions).toBeGreaterThanOrEqual(2);
    await page.locator('[data-testid=memory-history] button').first().click();
    await page.waitForSelector('[data-testid=memory-diff] .line.insert');
    expect(await page.textContent('[data-testid=memory-diff] .line.insert')).toContain(
      '"passes": true',
    );
    await shot('project');
    expect(browser.pageErrors).toEqual([]);
  }, 90_000);

  it('creates a project on a repository from the form; a bad one is one line and creates nothing', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'baton-ui-repo-'));
    try {
      const repo = await createUserRepo(root);
      const before = await checkoutFingerprint(repo);
      const id = `repo-${randomHex(3)}`;
      await page.goto(url('/new'));
      await page.fill('input[name=id]', id);
      await page.fill('textarea[name=goal]', 'Greeter\n- say hello\n- say goodbye');
      await page.fill('input[name=repo]', repo);
      await page.fill('input[name=base]', 'no-such-branch');
      await page.click('[data-testid=create-form] button[type=submit]');
      await page.waitForSelector('.form-message.error');
      const error = (await page.textContent('.form-message.error')) ?? '';
      expect(error).toContain('has no branch no-such-branch');
      expect(error.split('\n')).toHaveLength(1);
      expect(await dashboard.control.getProject(id)).toBeNull();

      await page.fill('input[name=base]', 'main');
      await page.click('[data-testid=create-form] button[type=submit]');
      await page.waitForURL(`**/projects/${id}`);
      await page.waitForSelector('.project-head .badge.status-completed', { timeout: 60_000 });
      const head = git(repo, 'rev-parse', `baton/${id}`);
      // The status badge comes from the project record and the session table from the session
      // summaries: the last session's row may arrive on a later live update than the badge.
      await page.waitForFunction(
        (short) =>
          [...document.querySelectorAll('[data-testid=session-commits]')].some((element) =>
            element.textContent?.includes(short),
          ),
        head.slice(0, 12),
        { timeout: 30_000 },
      );
      const stats = (await page.textContent('dl.stats')) ?? '';
      expect(stats).toContain(repo);
      expect(stats).toContain(`main ${git(repo, 'rev-parse', 'main').slice(0, 12)}`);
      expect(stats).toContain(`baton/${id}`);
      expect(stats).toContain(head.slice(0, 12));
      const commits = await page.locator('[data-testid=session-commits]').allTextContents();
      expect(commits.join(' ')).toContain(head.slice(0, 12));
      expect(git(repo, 'merge-base', '--is-ancestor', 'main', head)).toBe('');
      await page.click('button[data-action=diff-stat]');
      await page.waitForFunction(() =>
        document
          .querySelector('[data-testid=branch-diff-text]')
          ?.textContent?.includes('features/f2.sh'),
      );
      await page.click('button[data-action=diff-full]');
      await page.waitForFunction(() =>
        document
          .querySelector('[data-testid=branch-diff-text]')
          ?.textContent?.includes("+echo 'F1 ok: say hello'"),
      );
      expect(await checkoutFingerprint(repo)).toEqual(before);
      expect(browser.pageErrors).toEqual([]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }, 90_000);

  it('creates a project with allowed hosts from the form; a bad host name is one line and creates nothing', async () => {
    const id = `hosts-${randomHex(3)}`;
    await page.goto(url('/new'));
    await page.fill('input[name=id]', id);
    await page.fill('textarea[name=goal]', 'Fetch a package\n- install it');
    await page.fill('input[name=allowedHosts]', 'registry.npmjs.org, http://evil.example/x');
    await page.click('[data-testid=create-form] button[type=submit]');
    await page.waitForSelector('.form-message.error');
    const error = (await page.textContent('.form-message.error')) ?? '';
    expect(error).toContain('sandbox.allowedHosts');
    expect(error).toContain('must be a host name');
    expect(error.split('\n')).toHaveLength(1);
    expect(await dashboard.control.getProject(id)).toBeNull();

    await page.fill('input[name=allowedHosts]', 'Registry.npmjs.org *.github.com');
    await page.click('[data-testid=create-form] button[type=submit]');
    await page.waitForURL(`**/projects/${id}`);
    const stored = await dashboard.control.getProject(id);
    // The shared schema trims and lower-cases names, as for `baton enqueue --allow-host`.
    expect(stored?.sandbox).toEqual({ allowedHosts: ['registry.npmjs.org', '*.github.com'] });
    expect(browser.pageErrors).toEqual([]);
  }, 60_000);

  it('cancels a project from its page', async () => {
    const id = `cancel-${randomHex(3)}`;
    // Created but not queued, so no worker races the click.
    await dashboard.control.createProject({ id, goal: 'Something long\n- one\n- two' });
    await page.goto(url(`/projects/${id}`));
    await page.click('button[data-action=cancel]');
    await page.waitForSelector('.project-head .badge.status-cancelled');
    expect((await dashboard.control.getProject(id))?.status).toBe('cancelled');
    await page.waitForSelector('button[data-action=resume]');
    expect(browser.pageErrors).toEqual([]);
  });

  it('pauses a project from its page (distinct from cancel) and resumes it', async () => {
    const id = `pause-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Something long\n- one\n- two' });
    await page.goto(url(`/projects/${id}`));
    await page.click('button[data-action=pause]');
    await page.waitForSelector('.project-head .badge.status-paused');
    expect(await dashboard.control.getProject(id)).toMatchObject({
      status: 'paused',
      statusReason: 'paused by operator',
    });
    await page.waitForSelector('button[data-action=resume]');
    expect(await page.$('button[data-action=pause]')).toBeNull();
    expect(browser.pageErrors).toEqual([]);
  });

  it('sends guidance from the project page and shows a refusal as one line', async () => {
    const id = `say-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Something long\n- one\n- two' });
    await page.goto(url(`/projects/${id}`));
    await page.fill('[data-testid=guidance-text]', '   ');
    await page.click('button[data-action=say]');
    await page.waitForSelector('.guidance-box .action-message.error');
    expect(await page.textContent('.guidance-box .action-message')).toContain(
      'guidance must not be empty',
    );
    await page.fill('[data-testid=guidance-text]', 'Use <b>plain</b> output');
    await page.click('button[data-action=say]');
    await page.waitForFunction(() =>
      document.querySelector('.guidance-box .action-message')?.textContent?.startsWith('sent g-'),
    );
    expect(await dashboard.control.listGuidance(id)).toEqual([
      expect.objectContaining({ text: 'Use <b>plain</b> output', acknowledged: null }),
    ]);
    expect(browser.pageErrors).toEqual([]);
  });

  it('renders a hostile progress log without running any of it', async () => {
    const id = `hostile-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Hostile\n- one' });
    const store = await dashboard.control.memoryStore(id);
    await store.write('progress.md', HOSTILE_MARKDOWN, { mode: 'create' });
    await page.goto(url(`/projects/${id}`));
    await page.waitForSelector('[data-testid=progress-log] h1');
    await page.click('button.file-link[data-path="/memories/progress.md"]');
    await page.waitForSelector('.file-content h1');
    // Hover and click everything that could carry a handler or a javascript: URL.
    for (const link of await page.locator('[data-testid=progress-log] a').all()) await link.hover();
    expect(await activeContent(page)).toEqual(INERT);
    // The attack is shown as text, so a reader sees what the agent wrote.
    expect(await page.textContent('[data-testid=progress-log]')).toContain(
      '<script>window.__pwned = 1</script>',
    );
    await shot('hostile-progress');
    expect(browser.pageErrors).toEqual([]);
  });

  it('keeps every hostile input inert with the sanitiser as the only layer (no CSP, no marked)', async () => {
    const probe = await browser.context.newPage();
    // A blank page has no CSP: whatever the sanitiser lets through runs here.
    async function liveness(html: string): Promise<{ pwned: unknown; live: string[] }> {
      await probe.goto('about:blank');
      await probe.setContent(`<!doctype html><meta charset="utf-8"><body>${html}</body>`, {
        waitUntil: 'load',
      });
      for (const element of await probe.locator('body *').all()) {
        await element.hover({ timeout: 200, force: true }).catch(() => undefined);
        await element.focus({ timeout: 200 }).catch(() => undefined);
      }
      return probe.evaluate(() => {
        const live: string[] = [];
        const all = [...document.querySelectorAll('*')];
        if (
          document.querySelector('script, iframe, object, embed, base, meta[http-equiv], svg, math')
        )
          live.push('active element');
        if (all.some((element) => [...element.attributes].some((a) => a.name.startsWith('on'))))
          live.push('event handler');
        // The browser's own parse of every URL-bearing attribute.
        for (const element of all) {
          for (const name of ['href', 'src', 'action', 'formaction', 'xlink:href', 'data']) {
            const value = element.getAttribute(name);
            if (value === null) continue;
            const protocol = new URL(value, 'https://dashboard.invalid/').protocol;
            if (!['https:', 'http:', 'mailto:'].includes(protocol))
              live.push(`${name} ${protocol}`);
          }
        }
        return { pwned: (window as unknown as { __pwned?: unknown }).__pwned, live };
      });
    }
    try {
      let liveUnsanitised = 0;
      for (const [index, input] of HOSTILE_INPUTS.entries()) {
        // The control: the same harness sees the raw input run (or stay armed).
        const raw = await liveness(input);
        if (raw.pwned !== undefined || raw.live.length > 0) liveUnsanitised++;
        const clean = await liveness(sanitizeRenderedHtml(input));
        expect({ input: index + 1, ...clean }).toEqual({
          input: index + 1,
          pwned: undefined,
          live: [],
        });
      }
      // Most of the corpus is live HTML when nothing sanitises it (the rest is Markdown syntax).
      expect(liveUnsanitised).toBeGreaterThanOrEqual(40);
    } finally {
      await probe.close();
    }
  }, 120_000);

  it('marks the turns where context editing cleared input tokens', async () => {
    const id = `chart-${randomHex(3)}`;
    await dashboard.control.createProject({ id, goal: 'Long task\n- one' });
    const growth = (start: number) =>
      Array.from({ length: 8 }, (_, index) => ({ input: start + index * 2_500 }));
    await seedSession(dashboard.repository, id, {
      sessionId: 'c1',
      sessionNumber: 1,
      kind: 'init',
      turns: growth(3_000),
    });
    await seedSession(dashboard.repository, id, {
      sessionId: 'c2',
      sessionNumber: 2,
      turns: [
        ...growth(4_000),
        { input: 9_000, cleared: 14_000 },
        ...growth(10_000).slice(0, 4),
        { input: 8_000, cleared: 9_500 },
        { input: 500, cacheRead: 7_000, cacheWrite: 1_000 },
      ],
    });
    await page.goto(url(`/projects/${id}`));
    await page.waitForSelector('[data-testid=token-chart] circle.cleared');
    expect(await page.locator('[data-testid=token-chart] circle.cleared').count()).toBe(2);
    // The cached turn is a stacked bar: read from cache, written to it, uncached.
    for (const [part, tokens] of [
      ['bar-read', '7000'],
      ['bar-write', '1000'],
      ['bar-uncached', '500'],
    ] as const) {
      expect(
        await page
          .locator(`[data-testid=token-chart] rect.${part}[data-tokens="${tokens}"]`)
          .count(),
        part,
      ).toBe(1);
    }
    await page
      .locator('#tokens')
      .screenshot({ path: path.join(ARTIFACTS, 'dashboard-token-chart.png') });
  });

  it('serves a login page', async () => {
    await page.goto(url('/login'));
    await page.waitForSelector('input[name=token]');
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-login.png') });
  });

  it('shows Bull Board behind the dashboard at /queues', async () => {
    await page.goto(url('/queues'));
    await page.waitForSelector('text=baton-sessions', { timeout: 15_000 });
    await shot('queues');
    // Every project the suite made, in their different states, for the docs.
    await page.goto(url('/'));
    await page.waitForSelector('tr[data-status="cancelled"]');
    await shot('projects-overview');
  });
});
