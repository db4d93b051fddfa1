// What the console's Content-Security-Policy blocks in a real browser reaches the server: Chromium
// posts the violation to the route the policy names, and the server counts it by directive
// (docs/security.md, "The console's policy"). Against the real process; skipped without Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, browserMissing, launchBrowser } from '../helpers/browser.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const missing = browserMissing();
if (missing) console.warn(`skipping test/console/csp-report.browser.test.ts: ${missing}`);

describe.skipIf(missing !== null)('CSP violations in Chromium', () => {
  let server: ServerProcess;
  let browser: Browser;

  beforeAll(async () => {
    await ensureBuilt();
    server = await spawnServer({ ADMIN_TOKEN: 'admin-token-of-the-csp-report-test' });
    // Excused: the violation this test provokes, and the sign-in page's check for a session.
    browser = await launchBrowser(
      (message) =>
        /Content Security Policy/.test(message.text()) || message.location().url.endsWith('/v1/session'),
    );
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
  });

  const violations = async (directive: string) => {
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const line = text
      .split('\n')
      .find(
        (l) => l.startsWith('callbridge_csp_violations_total{') && l.includes(`directive="${directive}"`),
      );
    return Number(line?.split(' ').pop() ?? 'NaN');
  };

  it('counts an image from another origin, blocked on the console page, by its directive', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.baseUrl}/console`);
    await page.getByLabel('API key').waitFor();
    expect(await violations('img-src')).toBe(0);
    // What an injected element would try: load from another origin.
    await page.evaluate(`{
      const img = document.createElement('img');
      img.src = 'https://evil.example/pixel.png';
      document.body.append(img);
    }`);
    await expect.poll(() => violations('img-src'), { timeout: 10_000 }).toBe(1);
    expect(browser.problems).toEqual([]);
    await page.close();
  });
});
