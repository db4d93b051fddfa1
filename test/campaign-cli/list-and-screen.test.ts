// `campaign list`, where results land by default, and the terminal display: what stays on screen
// after a pause and a cancel is exactly the last block drawn, and a pause is said once.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CampaignIo, campaignCommand } from '../../src/campaign-cli/command.js';
import { fitWidth, pauseText, progressBlock } from '../../src/campaign-cli/display.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { QuickCarrier } from '../outbound/quick-carrier.js';

const TOKEN = 'admin-token-for-cli-screen';
const COLUMNS = 72;
const ESC = String.fromCharCode(27);

let server: TestServer;
let carrier: QuickCarrier;
let dir: string;

beforeAll(async () => {
  // Calls at real speed: a ringing call rings for 30 s, long enough to pause and cancel under it.
  carrier = new QuickCarrier(1);
  server = await startServer(
    { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'test-key', ADMIN_TOKEN: TOKEN },
    { originator: carrier, dialerOptions: { idlePollMs: 20 } },
  );
  carrier.dialer = server.app.callbridge.outbound.dialer;
  dir = mkdtempSync(join(tmpdir(), 'callbridge-cli-screen-'));
});
afterAll(async () => {
  carrier.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

function capture(opts: { tty?: boolean; env?: Record<string, string> } = {}) {
  let out = '';
  let err = '';
  const io: CampaignIo = {
    stdout: { write: (text: string) => (out += text), isTTY: opts.tty ?? false, columns: COLUMNS },
    stderr: (text) => (err += text),
    env: opts.env ?? { ADMIN_TOKEN: TOKEN },
    cwd: dir,
    pollMs: 20,
    onInterrupt: () => () => {},
  };
  return { io, out: () => out, err: () => err };
}

async function admin<T>(method: string, path: string, body?: string, type = 'application/json'): Promise<T> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': type }) },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (res.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as T) : (text as T);
}

async function campaignWith(name: string, csv: string): Promise<string> {
  const { id } = await admin<{ id: string }>(
    'POST',
    '/v1/campaigns',
    JSON.stringify({ name, pacing: { callsPerSecond: 10, maxConcurrent: 10 } }),
  );
  await admin('POST', `/v1/campaigns/${id}/contacts`, csv, 'text/csv');
  return id;
}

/**
 * The rows a terminal shows after `output`: text written at the cursor, `\n` to the next row,
 * ESC[nA up n rows, ESC[2K clears the row. Enough of a terminal for what the display writes.
 */
function screen(output: string): string[] {
  const rows: string[] = [''];
  let row = 0;
  const pattern = new RegExp(`${ESC}\\[(\\d*)([AK])|\n|[^${ESC}\n]+`, 'g');
  for (const [token, count, command] of output.matchAll(pattern)) {
    if (command === 'A') row = Math.max(0, row - Number(count || '1'));
    else if (command === 'K') rows[row] = '';
    else if (token === '\n') {
      row += 1;
      if (rows[row] === undefined) rows[row] = '';
    } else {
      expect(token.length, `a line wider than the terminal wraps: ${token}`).toBeLessThan(COLUMNS);
      rows[row] = (rows[row] ?? '') + token;
    }
  }
  // Rows cleared below the last block are blank on screen.
  while (rows.length > 0 && rows.at(-1) === '') rows.pop();
  return rows;
}

describe('campaign list', () => {
  it('lists the campaigns, newest first, with their state and progress', async () => {
    const first = await campaignWith('first list', 'phone\n+12125550100\n');
    const second = await campaignWith('second list', 'phone\n+12125550101\n+12125550102\n');
    const cap = capture();
    expect(await campaignCommand(['list', '--server', server.baseUrl], cap.io), cap.err()).toBe(0);
    const lines = cap.out().trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+state\s+done\s+created \(UTC\)\s+name$/);
    const firstRow = lines.findIndex((line) => line.startsWith(first));
    const secondRow = lines.findIndex((line) => line.startsWith(second));
    expect(secondRow).toBeGreaterThan(0);
    expect(firstRow).toBeGreaterThan(secondRow);
    expect(lines[secondRow]).toMatch(
      new RegExp(`^${second}\\s+draft\\s+0/2\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+second list$`),
    );
  });

  it('takes no campaign id', async () => {
    const cap = capture();
    expect(await campaignCommand(['list', 'cmp_x', '--server', server.baseUrl], cap.io)).toBe(2);
    expect(cap.err()).toMatch(/^callbridge campaign: unexpected argument "cmp_x"/);
  });
});

describe('results', () => {
  it('go under $DATA_DIR by default, not into the working directory, with a reason on failed rows', async () => {
    const csv = join(dir, 'quick.csv');
    // 90-99 fail at the carrier after a short ring.
    writeFileSync(csv, 'phone\n+12125550193\n');
    const data = join(dir, 'data-results');
    const cap = capture({ env: { ADMIN_TOKEN: TOKEN, DATA_DIR: data } });
    expect(await campaignCommand(['run', csv, '--server', server.baseUrl], cap.io), cap.err()).toBe(0);
    const id = /campaign (cmp_\w+)/.exec(cap.out())![1]!;
    // Into a pipe, a line per change: never two in a row that differ only in the time, the pace
    // measured or the estimate, which move every second by themselves.
    const progress = cap
      .out()
      .split('\n')
      .filter((line) => /^\d+s (running|completed)/.test(line))
      .map((line) => line.replace(/^\S+ /, '').replace(/, pace [^,;]*/, ''));
    expect(progress.length).toBeGreaterThan(0);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]).not.toBe(progress[i - 1]);
    const file = join(data, `results-${id}.csv`);
    expect(cap.out()).toContain(`results: ${file} (1 contacts)`);
    const [header, row] = readFileSync(file, 'utf8').trimEnd().split('\n');
    const note = header!.split(',').indexOf('note');
    expect(row!.split(',')[note]).not.toBe('');
    expect(row).toMatch(/,failed,/);
  }, 60_000);

  it('are ignored by git wherever they are written', () => {
    const ignore = readFileSync(join(__dirname, '../../.gitignore'), 'utf8').split('\n');
    expect(ignore).toContain('results-*.csv');
    expect(ignore).toContain('data/');
  });
});

describe('the terminal display', () => {
  it('says a pause once, and leaves only the last block on screen after pause then cancel', async () => {
    // Two numbers that ring out (30 s): in flight through the pause and the cancel.
    const id = await campaignWith('pause then cancel', 'phone\n+12125550181\n+12125550182\n+12125550183\n');
    await admin('POST', `/v1/campaigns/${id}/start`);
    const cap = capture({ tty: true });
    const watching = campaignCommand(['status', id, '--watch', '--server', server.baseUrl], cap.io);
    const until = async (text: string) => {
      for (let i = 0; i < 500 && !cap.out().includes(text); i += 1)
        await new Promise((r) => setTimeout(r, 20));
      expect(cap.out()).toContain(text);
    };
    await until('in flight');
    await admin('POST', `/v1/campaigns/${id}/pause`);
    await until('paused by an operator');
    await admin('POST', `/v1/campaigns/${id}/cancel`);
    expect(await watching).toBe(0);
    expect(cap.err()).toBe('');
    const shown = screen(cap.out());
    const last = await admin<Parameters<typeof progressBlock>[0]>('GET', `/v1/campaigns/${id}`);
    expect(last.state).toBe('cancelled');
    expect(shown).toHaveLength(progressBlock(last, Date.now()).length);
    expect(shown[0]).toMatch(new RegExp(`^campaign ${id} "pause then cancel": cancelled`));
    expect(shown.join('\n')).not.toMatch(/paused|resume/);
    // Rows of contacts ringing at the cancel say so.
    const results = await admin<string>('GET', `/v1/campaigns/${id}/results.csv`);
    for (const row of results.trimEnd().split('\n').slice(1)) expect(row).toMatch(/cancelled/);
  }, 60_000);

  it('does not repeat "paused by" and cuts lines to the terminal width', () => {
    expect(pauseText({ by: 'operator', reason: 'paused by an operator' })).toBe('paused by an operator');
    expect(pauseText({ by: 'breaker', reason: '3 of the last 5 calls failed' })).toBe(
      'paused by breaker: 3 of the last 5 calls failed',
    );
    expect(fitWidth(['x'.repeat(100), 'short'], 40)).toEqual([`${'x'.repeat(38)}…`, 'short']);
  });
});
