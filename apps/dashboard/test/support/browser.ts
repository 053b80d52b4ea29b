import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`CHROMIUM_PATH` to use another). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Errors the page threw (uncaught) and dialogs nobody expected. */
  pageErrors: string[];
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile, as root may run it here (see docs/pitfalls). */
export async function launchTestBrowser(
  viewport: { width: number; height: number } = { width: 1400, height: 900 },
): Promise<TestBrowser> {
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
