// Post-call analysis through the real entry point (`node dist/main.js`, as `npm start` runs it):
// with no account, a simulated call's record shows its analysis in `GET /v1/calls/:callSid`; and an
// analysis queued when the process dies is landed by the next process on the same DATA_DIR.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { type FakeSpeech, startFakeSpeech } from '../helpers/fake-speech.js';

const ADMIN_TOKEN = 'admin-token-for-analysis-tests';

let servers: ServerProcess[] = [];
let fake: FakeSpeech | undefined;
let dataDir: string | undefined;

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const server of servers) await server.dispose();
  servers = [];
  await fake?.close();
  fake = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = undefined;
});

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer({ ADMIN_TOKEN, ...env });
  servers.push(server);
  return server;
}

/** Places one simulated call with `callbridge call`; its callSid and what the command printed. */
async function placeCallPrinting(
  server: ServerProcess,
  args: string[] = [],
): Promise<{ sid: string; out: string }> {
  const call = spawn(process.execPath, ['bin/callbridge.js', 'call', '--server', server.baseUrl, ...args], {
    cwd: ROOT,
    // The server's DATA_DIR, never the checkout's ./data (which may hold another server's keys).
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      ADMIN_TOKEN,
      DATA_DIR: server.dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  call.stdout?.setEncoding('utf8').on('data', (text: string) => {
    out += text;
  });
  call.stderr?.resume();
  const [code] = await once(call, 'exit');
  expect(code, out).toBe(0);
  const sid = /call (CA[0-9a-f]{32}) ended/.exec(out)?.[1];
  if (!sid) throw new Error(`no callSid in the call's output:\n${out}`);
  return { sid, out };
}

/** Places one simulated call with `callbridge call` and returns its callSid. */
async function placeCall(server: ServerProcess): Promise<string> {
  return (await placeCallPrinting(server, ['--no-analysis'])).sid;
}

async function callRecord(baseUrl: string, callSid: string): Promise<CallRecord | null> {
  const res = await fetch(`${baseUrl}/v1/calls/${callSid}`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return res.status === 200 ? ((await res.json()) as CallRecord) : null;
}

describe('post-call analysis, end to end', () => {
  it('shows the analysis of a simulated call with no account (the built-in agent analyses it)', async () => {
    const server = await start({});
    const { sid: callSid, out } = await placeCallPrinting(server);
    // `callbridge call` waited for the analysis and printed it.
    expect(out).toMatch(/\nanalysis:\n {2}summary: {3}The caller spoke \w+, with no words/);
    expect(out).toMatch(/\n {2}sentiment: (positive|neutral|negative)/);
    expect(out).toMatch(/\n {2}topics: {4}\S/);
    expect(out).toMatch(/\n {2}intents: {3}\S/);
    await expect
      .poll(async () => (await callRecord(server.baseUrl, callSid))?.analysis?.outcome, { timeout: 10_000 })
      .toBe('ok');
    const { analysis } = (await callRecord(server.baseUrl, callSid))!;
    expect(analysis).toMatchObject({
      outcome: 'ok',
      attempts: 1,
      language: 'en',
      sentiment: expect.any(String),
    });
    expect(analysis?.summary).toMatch(/opening with "Thank you for calling Example Dental\./);
    expect(Array.isArray(analysis?.topics)).toBe(true);
    expect(Array.isArray(analysis?.intents)).toBe(true);
    expect(server.errorLogs().count).toBe(0);
  }, 60_000);

  it('loses no queued analysis when the process is killed: the next one on the same DATA_DIR lands it', async () => {
    // A crash (SIGKILL: no drain, no goodbye) between a call's end and its analysis must not lose it.
    fake = await startFakeSpeech();
    fake.always('/v1/read', { status: 503, body: { err_code: 'SERVICE_UNAVAILABLE' } });
    dataDir = mkdtempSync(join(tmpdir(), 'callbridge-analysis-restart-'));
    const first = await start({ DATA_DIR: dataDir, SPEECH_API_URL: fake.url });
    const callSid = await placeCall(first);
    // Wait until the failed attempt is written back: attempted once, no longer held.
    const db = new Database(join(dataDir, 'callbridge.db'), { readonly: true });
    const job = db.prepare<[string], { attempts: number; lease_token: string | null }>(
      'SELECT attempts, lease_token FROM analysis_jobs WHERE call_sid = ?',
    );
    await expect
      .poll(() => job.get(callSid), { timeout: 10_000 })
      .toMatchObject({ attempts: 1, lease_token: null });
    db.close();
    first.child.kill('SIGKILL');
    await first.exited;

    fake.always('/v1/read', {
      status: 200,
      body: { metadata: { language: 'en' }, results: { summary: { text: 'Landed after a restart.' } } },
    });
    const second = await start({ DATA_DIR: dataDir, SPEECH_API_URL: fake.url });
    await expect
      .poll(async () => (await callRecord(second.baseUrl, callSid))?.analysis?.outcome, { timeout: 20_000 })
      .toBe('ok');
    expect((await callRecord(second.baseUrl, callSid))?.analysis).toMatchObject({
      outcome: 'ok',
      attempts: 2,
      summary: 'Landed after a restart.',
    });
    expect(fake.requests.filter((r) => r.path === '/v1/read')).toHaveLength(2);
  }, 90_000);
});
