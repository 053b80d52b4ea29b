/// <reference lib="dom" />
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { requireCommands } from '@baton/test-support';

/** Debian's Chromium (`CHROMIUM_PATH` to use another). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
// Outside CI the browser suites skip (with a warning) on a machine without Chromium; in CI a
// missing browser fails them, never a silent pass.
requireCommands({ [CHROMIUM]: 'chromium' });

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Errors the page threw (uncaught) and dialogs nobody expected. */
  pageErrors: string[];
  close(): Promise<void>;
}

export interface TestBrowserOptions {
  /** Default 1400 x 900. */
  viewport?: { width: number; height: number };
  /**
   * Accept `confirm()` dialogs (the cancel button asks one). Default false. Any other dialog, an
   * `alert()` above all, would be injected script: it is dismissed and recorded in `pageErrors`.
   */
  acceptConfirm?: boolean;
}

/** Headless Chromium with a fresh profile, as root may run it here (see docs/pitfalls). */
export async function launchTestBrowser(options: TestBrowserOptions = {}): Promise<TestBrowser> {
  const viewport = options.viewport ?? { width: 1400, height: 900 };
  const userDataDir = await mkdtemp(path.join(tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('dialog', (dialog) => {
    if (options.acceptConfirm === true && dialog.type() === 'confirm') void dialog.accept();
    else {
      pageErrors.push(`unexpected ${dialog.type()}: ${dialog.message()}`);
      void dialog.dismiss();
    }
  });
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/** What in the page's `#main` could run script, and whether any did. */
export interface ActiveContent {
  /** `window.__pwned`: hostile fixtures set it when they run. */
  pwned: unknown;
  scripts: number;
  /** `img`, `iframe`, `object` and `svg` elements (but the token chart): each can carry script. */
  active: number;
  /** Elements with an `on…` attribute. */
  handlers: number;
  /** `javascript:`, `data:` and `vbscript:` hrefs. */
  dangerousLinks: string[];
}

/** `activeContent` of a page that shows hostile input safely. */
export const INERT: ActiveContent = {
  pwned: undefined,
  scripts: 0,
  active: 0,
  handlers: 0,
  dangerousLinks: [],
};

/** Reads the `ActiveContent` of `page` (compare with `INERT`). */
export function activeContent(page: Page): Promise<ActiveContent> {
  return page.evaluate(() => ({
    pwned: (window as unknown as { __pwned?: unknown }).__pwned,
    scripts: document.querySelectorAll('#main script').length,
    // The token chart is the dashboard's own SVG; any other came from the content.
    active: document.querySelectorAll(
      '#main img, #main iframe, #main object, #main svg:not([data-testid=token-chart])',
    ).length,
    handlers: [...document.querySelectorAll('#main *')].filter((element) =>
      [...element.attributes].some((attribute) => attribute.name.startsWith('on')),
    ).length,
    dangerousLinks: [...document.querySelectorAll('#main a[href]')]
      .map((link) => link.getAttribute('href') ?? '')
      // Browsers drop whitespace and control characters inside a scheme, so we do too.
      .map((href) => [...href].filter((character) => character.charCodeAt(0) > 0x20).join(''))
      .filter((href) => /^(javascript|data|vbscript):/i.test(href)),
  }));
}

/**
 * Clicks `button` once for each of `counts`, waiting each time until `rows` matches that many
 * elements: one page of older entries per click.
 */
export async function loadOlder(
  page: Page,
  selectors: { button: string; rows: string },
  counts: number[],
): Promise<void> {
  for (const count of counts) {
    await page.click(selectors.button);
    await page.waitForFunction(
      ({ rows, total }) => document.querySelectorAll(rows).length === total,
      { rows: selectors.rows, total: count },
    );
  }
}
