// `callbridge campaign` against a real server whose dialer a fast fake carrier drives: the shipped
// example campaign end to end (every outcome, the results CSV), progress on a terminal and in plain
// lines, the admin token file, every usage error, and the real executable.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CampaignIo,
  campaignCommand,
  RUN_DEFAULTS,
  runCampaignBody,
} from '../../src/campaign-cli/command.js';
import { EXAMPLE_CAMPAIGN_OUTCOMES } from '../helpers/example-campaign.js';
import { ensureBuilt, freePort, ROOT } from '../helpers/server-process.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { QuickCarrier } from '../outbound/quick-carrier.js';

const TOKEN = 'admin-token-for-cli-tests';
const EXAMPLE = join(ROOT, 'examples/contacts.csv');
const EXAMPLE_DNC = join(ROOT, 'examples/do-not-call.csv');
/** The example as the README runs it, only faster: calls a thousand times shorter, no retry delay. */
const FAST = ['--cps', '50', '--retry-delay', '0'];

let server: TestServer;
let carrier: QuickCarrier;
let dir: string;

beforeAll(async () => {
  carrier = new QuickCarrier();
  server = await startServer(
    { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'test-key', ADMIN_TOKEN: TOKEN },
    { originator: carrier, dialerOptions: { idlePollMs: 20 } },
  );
  carrier.dialer = server.app.callbridge.outbound.dialer;
  dir = mkdtempSync(join(tmpdir(), 'callbridge-cli-'));
});
afterAll(async () => {
  carrier.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Captured {
  io: CampaignIo;
  out: () => string;
  err: () => string;
  /** Whether the command is following and listens for an interrupt. */
  following: () => boolean;
  interrupt: () => void;
}

function capture(opts: { tty?: boolean; env?: Record<string, string>; cwd?: string } = {}): Captured {
  let out = '';
  let err = '';
  let stop: (() => void) | null = null;
  return {
    io: {
      stdout: { write: (text: string) => (out += text), isTTY: opts.tty ?? false },
      stderr: (text) => (err += text),
      env: opts.env ?? { ADMIN_TOKEN: TOKEN },
      cwd: opts.cwd ?? dir,
      pollMs: 20,
      onInterrupt: (handler) => {
        stop = handler;
        return () => (stop = null);
      },
    },
    out: () => out,
    err: () => err,
    following: () => stop !== null,
    interrupt: () => stop?.(),
  };
}

const runCli = (args: string[], cap: Captured) =>
  campaignCommand([...args, '--server', server.baseUrl], cap.io);

describe('campaign run', () => {
  it('runs the shipped example to the end with every outcome, in plain lines, and writes the results', async () => {
    const cap = capture();
    const code = await runCli(
      ['run', EXAMPLE, ...FAST, '--dnc', EXAMPLE_DNC, '--out', 'example-results.csv'],
      cap,
    );
    expect(code, cap.err()).toBe(0);
    const lines = cap.out().trimEnd().split('\n');
    expect(lines[0]).toBe('do-not-call list: 1 numbers added, 0 already listed');
    expect(lines[1]).toMatch(/^campaign cmp_[0-9a-f]{20} "contacts": 18 contacts added, 2 rows rejected$/);
    expect(lines.slice(2, 4)).toEqual([
      '  row 20: duplicate of row 2',
      '  row 21: phone is not in E.164 (+ and the country code); add a country column',
    ]);
    const progress = lines.slice(4, -1);
    expect(progress.length).toBeGreaterThan(0);
    for (const line of progress)
      expect(line).toMatch(/^\d+s (running|completed): \d+\/19 done, \d+ in flight, pace /);
    expect(progress.at(-1)).toMatch(/^\d+s completed: 19\/19 done, 0 in flight/);
    expect(cap.out()).not.toContain('\x1b[');
    expect(lines.at(-1)).toBe(`results: ${join(dir, 'example-results.csv')} (19 contacts)`);

    const results = readFileSync(join(dir, 'example-results.csv'), 'utf8').trimEnd().split('\n');
    expect(results[0]).toBe(
      'phone,first_name,plan,attempts,state,outcome,duration_seconds,answered_by,summary,note,sentiment,topics,intents,analysis',
    );
    const outcomes = new Map(results.slice(1).map((row) => [row.split(',')[0], row.split(',')[5]]));
    expect(Object.fromEntries(outcomes)).toEqual(EXAMPLE_CAMPAIGN_OUTCOMES);
    // Busy on the first try, a person on the second: two attempts, within the budget of two.
    expect(results.find((row) => row.startsWith('+12125550166'))).toMatch(
      /^\+12125550166,Frances,silver,2,done,completed,/,
    );
    expect(carrier.dials.filter((d) => d.to === '+12125550130')).toEqual([]);
    expect(carrier.dials.find((d) => d.to === '+12125550150')?.amd?.voicemailText).toMatch(
      /^Hello, this is an automated call/,
    );
  });

  it('redraws its progress in place on a terminal', async () => {
    const csv = join(dir, 'two.csv');
    writeFileSync(csv, 'phone\n+12125550100\n+12125550175\n');
    const cap = capture({ tty: true });
    expect(await runCli(['run', csv, '--cps', '50', '--retry-delay', '0', '--out', 'two.csv.out'], cap)).toBe(
      0,
    );
    const out = cap.out();
    expect(out).toContain('\x1b[4A');
    const last = out.split('\x1b[4A').at(-1)!;
    expect(last).toMatch(/campaign cmp_\w+ "two": completed \(\d+s\)/);
    expect(last).toContain('contacts  2 total · 0 pending · 0 dialing · 0 retry · 2 done');
    expect(last).toMatch(/outcomes {2}completed 1 · busy 1/);
    expect(last).toMatch(/calls {5}0 in flight · pace [\d.]+\/s \(set 50\/s\)/);
  });

  it('stops following on an interrupt and says how to follow again; the campaign goes on', async () => {
    const slow = new QuickCarrier(1);
    const slowServer = await startServer(
      { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'test-key', ADMIN_TOKEN: TOKEN },
      { originator: slow, dialerOptions: { idlePollMs: 20 } },
    );
    slow.dialer = slowServer.app.callbridge.outbound.dialer;
    try {
      const csv = join(dir, 'slow.csv');
      writeFileSync(csv, 'phone\n+12125550100\n');
      const cap = capture();
      const running = campaignCommand(['run', csv, '--server', slowServer.baseUrl], cap.io);
      // Interrupted once it follows the campaign (its one call is still ringing then).
      while (!cap.following()) await new Promise((resolve) => setTimeout(resolve, 10));
      cap.interrupt();
      expect(await running).toBe(130);
      expect(cap.err()).toMatch(
        /^stopped following; the campaign goes on\. Follow it with: callbridge campaign status cmp_\w+ --watch\n$/,
      );
    } finally {
      slow.close();
      await slowServer.close();
    }
  }, 60_000);
});

describe('status, pause, resume, cancel and export', () => {
  it('drives a campaign by id', async () => {
    const create = await fetch(`${server.baseUrl}/v1/campaigns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'by id' }),
    });
    const { id } = (await create.json()) as { id: string };
    const status = capture();
    expect(await runCli(['status', id], status)).toBe(0);
    expect(status.out().split('\n')[0]).toBe(`campaign ${id} "by id": draft (0s)`);
    const cancel = capture();
    expect(await runCli(['cancel', id], cancel)).toBe(0);
    expect(cancel.out()).toBe(`campaign ${id}: cancelled\n`);
    const pause = capture();
    expect(await runCli(['pause', id], pause)).toBe(1);
    expect(pause.err()).toBe(
      `callbridge campaign: campaign ${id} is cancelled; pause needs a campaign that is running\n`,
    );
    const watch = capture();
    expect(await runCli(['status', id, '--watch'], watch)).toBe(0);
    expect(watch.out()).toMatch(/cancelled/);
    const exported = capture();
    expect(await runCli(['export', id, '--out', 'by-id.csv'], exported)).toBe(0);
    expect(readFileSync(join(dir, 'by-id.csv'), 'utf8')).toBe(
      'phone,attempts,state,outcome,duration_seconds,answered_by,summary,note,sentiment,topics,intents,analysis\n',
    );
  });

  it('reports what the server says of an unknown campaign, and an unreachable server', async () => {
    const missing = capture();
    expect(await runCli(['status', 'cmp_nothing'], missing)).toBe(1);
    expect(missing.err()).toBe('callbridge campaign: no campaign cmp_nothing\n');
    const down = capture();
    const closed = `http://127.0.0.1:${await freePort()}`;
    expect(await campaignCommand(['status', 'cmp_x', '--server', closed], down.io)).toBe(1);
    expect(down.err()).toBe(
      `callbridge campaign: cannot reach the server at ${closed} (ECONNREFUSED); is it running (npm start)?\n`,
    );
  });
});

describe('the admin token', () => {
  it('comes from $DATA_DIR/admin-token when ADMIN_TOKEN is not set', async () => {
    const data = join(dir, 'data');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(data, { recursive: true });
    writeFileSync(join(data, 'admin-token'), `${TOKEN}\n`, { mode: 0o600 });
    const ok = capture({ env: {}, cwd: dir });
    expect(await runCli(['status', 'cmp_nothing'], ok)).toBe(1);
    expect(ok.err()).toBe('callbridge campaign: no campaign cmp_nothing\n');
    const wrong = capture({ env: { ADMIN_TOKEN: 'not-the-servers-token' } });
    expect(await runCli(['status', 'cmp_nothing'], wrong)).toBe(1);
    expect(wrong.err()).toMatch(
      /admin API needs Authorization: Bearer <API key or ADMIN_TOKEN> \(the token came from ADMIN_TOKEN/,
    );
    const none = capture({ env: { DATA_DIR: 'nowhere' }, cwd: dir });
    expect(await runCli(['status', 'cmp_nothing'], none)).toBe(1);
    expect(none.err()).toBe(
      `callbridge campaign: no admin token: set ADMIN_TOKEN, or run this where the server keeps its data (${join(dir, 'nowhere', 'admin-token')} does not exist)\n`,
    );
  });
});

describe('usage', () => {
  it.each([
    [[], /^usage: callbridge campaign/],
    [['launch', 'x'], /^callbridge campaign: unknown command "launch"/],
    [['run'], /^callbridge campaign: run needs a contacts CSV file/],
    [['status'], /^callbridge campaign: status needs a campaign id/],
    [['run', 'a.csv', 'b.csv'], /^callbridge campaign: unexpected argument "b.csv"/],
    [['run', 'a.csv', '--watch'], /^callbridge campaign: --watch does not apply to run/],
    [['status', 'cmp_x', '--cps', '2'], /^callbridge campaign: --cps does not apply to status/],
    [['run', 'a.csv', '--cps', 'fast'], /^callbridge campaign: --cps must be a positive number, got "fast"/],
    [
      ['run', 'a.csv', '--concurrency', '0'],
      /^callbridge campaign: --concurrency must be a positive number, got "0"/,
    ],
    [['run', 'a.csv', '--amd', 'maybe'], /^callbridge campaign: --amd must be voicemail, hangup or off/],
    [
      ['run', 'a.csv', '--amd', 'off', '--voicemail', 'hi'],
      /^callbridge campaign: --voicemail needs --amd voicemail/,
    ],
    [
      ['run', 'a.csv', '--amd', 'hangup', '--voicemail-audio', 'https://a.example/m.wav'],
      /^callbridge campaign: --voicemail-audio needs --amd voicemail/,
    ],
    [
      ['status', 'cmp_x', '--server', 'ftp://x'],
      /^callbridge campaign: --server must be an http or https URL/,
    ],
    [['status', 'cmp_x', '--bogus'], /^callbridge campaign: Unknown option '--bogus'/],
  ])('refuses %j with exit 2', async (args, message) => {
    const cap = capture();
    expect(await campaignCommand(args, cap.io)).toBe(2);
    expect(cap.err()).toMatch(message);
  });

  it.each([
    [[], { text: RUN_DEFAULTS.voicemail }],
    [['--voicemail', 'Call us back'], { text: 'Call us back' }],
    [['--voicemail-audio', 'https://a.example/m.wav'], { audioUrl: 'https://a.example/m.wav' }],
    [
      ['--voicemail-audio', 'https://a.example/m.wav', '--voicemail', 'Call us back'],
      { text: 'Call us back', audioUrl: 'https://a.example/m.wav' },
    ],
  ])('run %j leaves the voicemail %j', (args, voicemail) => {
    const { values } = parseArgs({
      args,
      options: { voicemail: { type: 'string' }, 'voicemail-audio': { type: 'string' } },
    });
    expect(runCampaignBody('a.csv', values).amd).toEqual({ mode: 'voicemail', voicemail });
  });

  it('prints its usage on --help, exit 0', async () => {
    const cap = capture();
    expect(await campaignCommand(['--help'], cap.io)).toBe(0);
    expect(cap.out()).toMatch(/^usage: callbridge campaign <command>/);
  });

  it('says when the contacts file cannot be read, exit 1', async () => {
    const cap = capture();
    expect(await runCli(['run', 'missing.csv'], cap)).toBe(1);
    expect(cap.err()).toBe('callbridge campaign: cannot read missing.csv (ENOENT)\n');
  });
});

describe('the executable', () => {
  it('runs `callbridge campaign run` as a process, printing plain lines into a pipe', async () => {
    await ensureBuilt();
    const csv = join(dir, 'spawned.csv');
    writeFileSync(csv, 'phone\n+12125550100\n+12125550188\n');
    const child = spawn(
      process.execPath,
      [
        'bin/callbridge.js',
        'campaign',
        'run',
        csv,
        '--server',
        server.baseUrl,
        '--cps',
        '20',
        '--retry-delay',
        '0',
        '--out',
        join(dir, 'spawned-results.csv'),
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN: TOKEN, DATA_DIR: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    expect(out).toMatch(/"spawned": 2 contacts added, 0 rows rejected/);
    expect(out).toMatch(/completed: 2\/2 done/);
    expect(out).not.toContain('\x1b[');
    expect(readFileSync(join(dir, 'spawned-results.csv'), 'utf8')).toMatch(/\+12125550188,2,done,no_answer/);
  }, 120_000);
});
