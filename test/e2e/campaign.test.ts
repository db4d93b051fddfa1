// A whole campaign on one machine with no carrier account, over real processes (README.md, "Run a
// simulated campaign"): the server as `npm start` runs it places its calls with the built-in
// simulated carrier, whose callees answer as the number plan says; `callbridge campaign run` follows
// it to the end in plain lines and writes the results. Every outcome is represented, and the
// records of the calls name their campaign, contact and attempt.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { EXAMPLE_CAMPAIGN_OUTCOMES } from '../helpers/example-campaign.js';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-campaign-e2e';
let server: ServerProcess;
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  // Callees ring and wait ten times less than real phones; their audio still plays in real time.
  server = await spawnServer({ ADMIN_TOKEN: TOKEN, SIM_CALLEE_SPEEDUP: '10' });
  dir = mkdtempSync(join(tmpdir(), 'callbridge-campaign-e2e-'));
}, 60_000);

afterAll(async () => {
  await server?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function records(): Promise<CallRecord[]> {
  const all: CallRecord[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const res = await fetch(`${server.baseUrl}/v1/calls?limit=200${query}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const page = (await res.json()) as { calls: CallRecord[]; nextCursor: string | null };
    all.push(...page.calls);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

describe('a simulated campaign end to end', () => {
  it('runs examples/contacts.csv to completion against the simulated carrier with every outcome', async () => {
    const out = join(dir, 'results.csv');
    const child = spawn(
      process.execPath,
      [
        'bin/callbridge.js',
        'campaign',
        'run',
        'examples/contacts.csv',
        '--dnc',
        'examples/do-not-call.csv',
        '--retry-delay',
        '0',
        '--server',
        server.baseUrl,
        '--out',
        out,
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '', ADMIN_TOKEN: TOKEN, DATA_DIR: server.dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let printed = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (printed += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (printed += text));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, `${printed}\n${server.output()}`).toBe(0);
    // Not a terminal: plain progress lines, no redrawing.
    expect(printed).not.toContain('\x1b[');
    expect(printed).toMatch(/^\d+s completed: 19\/19 done, 0 in flight/m);

    const rows = readFileSync(out, 'utf8').trimEnd().split('\n');
    const outcome = new Map(rows.slice(1).map((row) => [row.split(',')[0], row.split(',')[5]]));
    expect(Object.fromEntries(outcome)).toEqual(EXAMPLE_CAMPAIGN_OUTCOMES);
    // A silent callee gives detection no verdict it is sure of: treated as a person, not hung up on.
    expect(rows.find((row) => row.startsWith('+12125550142'))).toMatch(/,completed,\d+,unknown,/);
    expect(rows.find((row) => row.startsWith('+12125550150'))).toMatch(/,voicemail_left,\d+,machine,/);
    // Busy first, a person on the retry: two attempts.
    expect(rows.find((row) => row.startsWith('+12125550166'))).toMatch(
      /^\+12125550166,Frances,silver,2,done,completed,/,
    );

    const calls = await records();
    const person = calls.find((call) => call.to === '+12125550100')!;
    expect(person).toMatchObject({ direction: 'outbound', carrier: 'twilio', endReason: 'caller_hangup' });
    expect(person.outbound).toMatchObject({ contact: 1, answeredBy: 'human', amdVerdict: 'human' });
    expect(person.outbound?.campaign).toMatch(/^cmp_/);
    expect(person.outbound?.attempt).toBe(`${person.outbound?.campaign}.1.1`);
    // The greeting reached the person: the agent spoke once detection said human.
    expect(person.turns[0]).toMatchObject({ role: 'assistant', interrupted: false });
    const voicemail = calls.find((call) => call.to === '+12125550150')!;
    expect(voicemail.endReason).toBe('voicemail_left');
    // The message was heard to its end, and nothing of the agent before it.
    expect(voicemail.turns).toHaveLength(1);
    expect(voicemail.turns[0]!.content).toMatch(/^Hello, this is an automated call/);
    expect(voicemail.turns[0]!.heardMs).toBe(voicemail.turns[0]!.sentMs);
    const busy = calls.find((call) => call.to === '+12125550172')!;
    expect(busy).toMatchObject({ direction: 'outbound', endReason: 'carrier_busy' });
    expect(busy.carrierStatus).toEqual({ status: 'busy', reason: 'carrier status busy (SIP 486)' });
    expect(server.errorLogs().count, server.errorLogs().first.join('\n')).toBe(0);
  }, 180_000);
});
