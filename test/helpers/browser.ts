// The system Chromium (Debian's `chromium`, installed by .ci/run) driven by playwright-core, which
// never downloads a browser of its own. Each launch gets a fresh profile folder, removed on close,
// and every page it opens reports its errors: uncaught exceptions and console errors.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or null when they can. */
export function browserMissing(): string | null {
  return existsSync(CHROMIUM)
    ? null
    : `${CHROMIUM} is absent (Debian's chromium package; .ci/run installs it)`;
}

export interface Browser {
  context: BrowserContext;
  /** Page errors and console errors seen so far, on every page of this browser. */
  problems: string[];
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
}

/** Console errors a test expects may be excused: return true for those. */
export type Excuse = (message: ConsoleMessage) => boolean;

export async function launchBrowser(excuse: Excuse = () => false): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'callbridge-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !excuse(message)) {
        problems.push(`console error: ${message.text()} (${message.location().url})`);
      }
    });
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  return {
    context,
    problems,
    newPage: async (viewport) => {
      const page = await context.newPage();
      if (viewport) await page.setViewportSize(viewport);
      return page;
    },
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
