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
