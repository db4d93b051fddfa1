// The operator console in a real browser (docs/console.md), against the real server process and a
// simulated carrier: sign in with a key, see a live call appear, listen to it and hang it up, read
// its page, and run a campaign from upload to cancel, with no page error along the way. Elements
// are found by role and accessible name only, as a screen reader finds them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeCall } from '../../src/sim/carrier/place-call.js';
import { simulationEnvFromDataDir } from '../../src/sim/carrier/simulation-keys-file.js';
import { type Browser, browserMissing, launchBrowser } from '../helpers/browser.js';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'console-browser-test-admin-token';
// Screenshots are always taken, so that path is tested; they replace the tracked ones in docs/images
// only when asked (UPDATE_SCREENSHOTS=1), so a test run leaves the checkout clean (docs/console.md).
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(ROOT, 'docs', 'images')
    : join(ROOT, 'coverage', 'screenshots');
const CALLER = '+15005550006';
const missing = browserMissing();
if (missing !== null) console.log(`skipping the console's browser tests: ${missing}`);

/** Polls `read` until `check` holds, as a person watching the page would wait. */
async function until<T>(
  read: () => Promise<T>,
  check: (value: T) => boolean,
  what: string,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (check(last)) return last;
    if (Date.now() > deadline)
      throw new Error(`waited ${timeoutMs} ms for ${what}; last saw ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const textOf = (locator: Locator) => async () =>
  (await locator.count()) > 0 ? await locator.first().innerText() : '';

describe.skipIf(missing !== null)('the console in Chromium', () => {
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  let endedCallSid = '';
  /** Each test answers for the problems seen while it ran. */
  const expectNoProblems = () => expect(browser.problems.splice(0)).toEqual([]);

  beforeAll(async () => {
    await ensureBuilt();
    // Callees ring and wait ten times less than real phones; their audio still plays in real time.
    server = await spawnServer({ ADMIN_TOKEN: TOKEN, SIM_CALLEE_SPEEDUP: '10' });
    // Before signing in, the page asks whether a session exists; the answer 401 is expected.
    browser = await launchBrowser(
      (message) => message.location().url.endsWith('/v1/session') && /401/.test(message.text()),
    );
    page = await browser.newPage();
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
  });

  it('signs in with a key, by keyboard, and shows the navigation', async () => {
    await page.goto(`${server.baseUrl}/console`);
    const key = page.getByLabel('API key');
    await key.waitFor();
    await page.screenshot({ path: join(SCREENSHOTS, 'console-sign-in.png') });
    await key.fill('not-a-key-of-this-server');
    await key.press('Enter');
    await until(textOf(page.getByRole('alert')), (text) => /not valid/.test(text), 'the refusal');

    await key.fill(TOKEN);
    await key.press('Enter');
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Live calls', exact: true }).waitFor();
    const links = await nav.getByRole('link').allInnerTexts();
    expect(links).toEqual(['Live calls', 'Calls', 'Campaigns', 'Do not call', 'Keys', 'Audit']);
    expectNoProblems();
  });

  it('shows a live simulated call as it starts, plays its audio on Listen, and hangs it up', async () => {
    const phrase = readFileSync(join(ROOT, 'assets', 'phrases', 'caller-order.ulaw'));
    // The caller stays on the line until the console hangs up; by then the caller has spoken and
    // the agent has answered, so the call's page has both sides to show.
    let callerSpoke = false;
    let agentReplied: () => void = () => {};
    const replied = new Promise<void>((resolve) => (agentReplied = resolve));
    const call = placeCall({
      server: server.baseUrl,
      // Signed as `callbridge call` signs, with the server's simulation keys: the call is verified,
      // so its answer carries the observer token that streams its events here.
      env: simulationEnvFromDataDir({ DATA_DIR: server.dataDir }, ROOT),
      audio: phrase,
      from: CALLER,
      holdMs: 120_000,
      onEvent: (event) => {
        if (event.type !== 'transcript') return;
        if (event.role === 'user') callerSpoke = true;
        else if (callerSpoke) agentReplied();
      },
    });
    const row = page
      .getByRole('region', { name: 'Calls in progress' })
      .getByRole('row', { name: new RegExp(`\\${CALLER}`) });
    await row.waitFor({ timeout: 20_000 });

    await row.getByRole('button', { name: 'Listen' }).click();
    const status = page.getByRole('status');
    const heard = await until(
      textOf(status),
      (text) => /Listening to \S+ .* in (\d{2,}) chunks/.test(text),
      'audio arriving on the listen socket',
    );
    expect(heard).toMatch(/[1-9][\d.]* (B|KB|MB) of audio received/);
    await page.screenshot({ path: join(SCREENSHOTS, 'console-live-calls.png') });
    const phone = await browser.newPage({ width: 390, height: 844 });
    await phone.goto(`${server.baseUrl}/console`);
    await phone.getByRole('region', { name: 'Calls in progress' }).waitFor();
    await phone.screenshot({ path: join(SCREENSHOTS, 'console-live-calls-phone.png') });
    // Nothing but the table's own scroller is wider than the phone.
    expect(await phone.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await phone.close();

    await replied;
    await row.getByRole('button', { name: 'Hang up' }).click();
    const result = await call;
    endedCallSid = result.callSid;
    expect(result.endReason).not.toBe('caller-hangup');
    // The listen socket ends with the call, and the page says so.
    await until(textOf(status), (text) => /^The call \S+ ended/.test(text), 'listening ending with the call');
    await until(
      () => row.count(),
      (n) => n === 0,
      'the call leaving the live list',
    );
    expectNoProblems();
  }, 60_000);

  it(
    "opens the call's page from the history: its transcript, and its recording when there is one",
    { timeout: 60_000 },
    async () => {
      await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link', { name: 'Calls', exact: true })
        .click();
      const link = page
        .getByRole('region', { name: 'Call history' })
        .getByRole('link', { name: endedCallSid });
      await link.waitFor({ timeout: 20_000 });
      await link.click();
      const transcript = page.getByRole('region', { name: 'Transcript' });
      await transcript.waitFor();
      const text = await transcript.innerText();
      expect(text).toMatch(/Agent\s+Thank you for calling/);
      expect(text).toMatch(/Caller\s+\S/);
      expect(text).toMatch(/End\s+\S+/);
      const recording = page.getByRole('region', { name: 'Recording' });
      const recorded = (await recording.getByLabel('Call recording').count()) > 0;
      if (recorded) {
        await recording.getByRole('link', { name: 'Download recording' }).waitFor();
        // Both channels drawn, under the page's policy: a refused style would be a console error.
        await recording.getByRole('img', { name: /^Waveforms/ }).waitFor();
      } else {
        await recording.getByText('This call was not recorded.').waitFor();
      }
      await page.screenshot({ path: join(SCREENSHOTS, 'console-call.png'), fullPage: true });
      expectNoProblems();
    },
  );

  it('creates a campaign, uploads contacts with a bad row, starts it, watches it move and cancels it', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Campaigns', exact: true })
      .click();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name', { exact: true }).fill('console renewals');
    // One call at a time, so the campaign is still running when it is cancelled.
    await page.getByLabel('Calls per second').fill('1');
    await page.getByLabel('Most calls at once').fill('1');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Campaign console renewals' }).waitFor();
    const state = page.getByRole('status').filter({ hasText: /^State:/ });
    await until(textOf(state), (text) => /^State: draft/.test(text), 'the draft state');

    // Ten people the simulated carrier answers, and one row that is no number (row 7 of the file).
    const people = Array.from({ length: 10 }, (_, i) => `+12125550${100 + i},Person ${i}`);
    const csv = ['phone,first_name', ...people.slice(0, 5), 'not-a-number,Bad', ...people.slice(5)].join(
      '\n',
    );
    await page
      .getByLabel('Contacts CSV')
      .setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Upload contacts' }).click();
    const rejected = page.getByRole('region', { name: 'Rejected rows' });
    await rejected.waitFor();
    expect(await textOf(page.getByRole('status').filter({ hasText: /^Added/ }))()).toMatch(
      /Added 10 contacts; 1 row rejected/,
    );
    expect(await rejected.getByRole('row').allInnerTexts()).toEqual([
      expect.stringMatching(/Row\s+Reason/),
      expect.stringMatching(/^7\s+\S/),
    ]);

    await page.getByRole('button', { name: 'Start' }).click();
    await until(textOf(state), (text) => /^State: running/.test(text), 'the running state');
    const progress = page.getByRole('region', { name: 'Progress' });
    await until(
      textOf(progress),
      // The rejected row is done at once (invalid); a call in flight or completed is the campaign moving.
      (text) => /Calls in flight\s*[1-9]|completed:\s*[1-9]/.test(text),
      'the progress stream showing calls',
      30_000,
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'console-campaign.png'), fullPage: true });

    await page.getByRole('button', { name: 'Cancel' }).click();
    await until(textOf(state), (text) => /^State: cancelled/.test(text), 'the cancelled state');
    expect(await page.getByRole('link', { name: 'Results CSV' }).getAttribute('href')).toMatch(
      /results\.csv$/,
    );
    expectNoProblems();
  }, 60_000);

  it('lists the control actions just taken in the audit log, with the key that took them', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Audit', exact: true })
      .click();
    const entries = page.getByRole('region', { name: 'Audit entries' });
    await entries.waitFor();
    const rows = await entries.getByRole('row').allInnerTexts();
    for (const action of [
      'call.listen',
      'call.hangup',
      'campaign.create',
      'campaign.start',
      'campaign.cancel',
    ]) {
      expect(
        rows.some((row) => row.includes(action)),
        `${action} in ${rows.join('\n')}`,
      ).toBe(true);
    }
    expectNoProblems();
  });

  it('shows a viewer no controls and no admin screens', async () => {
    const created = await fetch(`${server.baseUrl}/v1/keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'wallboard', role: 'viewer' }),
    });
    expect(created.status).toBe(201);
    const { key } = (await created.json()) as { key: string };

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    expect(await nav.getByRole('link').allInnerTexts()).toEqual([
      'Live calls',
      'Calls',
      'Campaigns',
      'Do not call',
    ]);
    expect(await page.getByRole('button', { name: 'New campaign' }).count()).toBe(0);
    await nav.getByRole('link', { name: 'Do not call', exact: true }).click();
    await page.getByLabel('Search numbers').waitFor();
    expect(await page.getByLabel('Number to add').count()).toBe(0);
    expectNoProblems();
  });
});
