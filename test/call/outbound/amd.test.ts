// Answering-machine detection on outbound calls, through real sockets: the server places each call
// with the simulated carrier API, whose callee answers as the number plan says and posts the
// verdict; the built-in local agent speaks. The agent never talks over a voicemail greeting; on a
// person it speaks at once; on a machine the voicemail plays after the beep, is heard to its end,
// and the call hangs up; an unsure verdict is a person. A pre-recorded voicemail (`audioUrl`) is
// fetched once and heard whole; one that cannot be fetched falls back to the text, or hangs up.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgent, type LocalAgent } from '../../../src/sim/agent/server.js';
import { type SimCalleeResult, simulatedCallee } from '../../../src/sim/callee/answer.js';
import { simulatedCalleeEnv } from '../../helpers/simulation.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';
import { decodeMulaw, encodeMulaw } from '../../../src/audio/codec.js';
import { writeWavMulaw } from '../../../src/audio/wav-writer.js';
import type { CallRecord } from '../../../src/store/call-record.js';
import { freePort } from '../../helpers/free-port.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const TOKEN = 'admin-token-for-amd-tests';
let agent: LocalAgent;
let sim: SimulatedCarrierApi;
let server: TestServer;
const ended = new Map<string, (result: SimCalleeResult) => void>();
/** The operator's recordings: 1.2 s of a rising tone as μ-law 8 kHz WAV, and a file that is no WAV. */
// Decoded and encoded once: μ-law's two zeros read as one sample, so the file plays back byte for byte.
const MESSAGE = encodeMulaw(
  decodeMulaw(
    encodeMulaw(
      Int16Array.from({ length: 9600 }, (_, i) =>
        Math.round(8000 * Math.sin((2 * Math.PI * (300 + i / 20) * i) / 8000)),
      ),
    ),
  ),
);
let files: Server;
let filesUrl: string;
const fetched: string[] = [];

beforeAll(async () => {
  agent = await startLocalAgent({ apiKeys: ['local'] });
  files = createServer((req, res) => {
    fetched.push(req.url ?? '');
    if (req.url === '/message.wav')
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(writeWavMulaw(MESSAGE));
    else if (req.url === '/notes.txt') res.writeHead(200, { 'content-type': 'text/plain' }).end('not a wav');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  sim = await startSimulatedCarrierApi({
    onPlaced: simulatedCallee({
      timeScale: 0.1,
      env: simulatedCalleeEnv(),
      onCallEnded: (result) => (ended.get(result.callSid) ?? ended.get(`campaign ${result.to}`))?.(result),
    }),
  });
  server = await startServer(
    // The operator's recordings are served on loopback: allowed by name, as an operator would.
    { AGENT_URL: agent.url, AGENT_API_KEY: 'local', ADMIN_TOKEN: TOKEN, FETCH_ALLOWED_HOSTS: '127.0.0.1' },
    { simulatedCarrierApiUrl: sim.url },
  );
});

afterAll(async () => {
  await server?.close();
  await sim?.close();
  await agent?.close();
  await new Promise((resolve) => files?.close(resolve));
});

/** Places one call with POST /v1/calls; resolves once the callee hung up and the record is saved. */
async function call(body: Record<string, unknown>): Promise<{ callee: SimCalleeResult; record: CallRecord }> {
  const res = await fetch(`${server.baseUrl}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const placed = (await res.json()) as { callSid: string };
  expect(res.status, JSON.stringify(placed)).toBe(201);
  const callee = await new Promise<SimCalleeResult>((resolve) => ended.set(placed.callSid, resolve));
  let record: CallRecord | null = null;
  for (let i = 0; i < 100 && record === null; i++) {
    record = await server.store.getCallRecord(placed.callSid);
    if (record === null) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { callee, record: record! };
}

const VOICEMAIL = {
  mode: 'voicemail',
  voicemail: { text: 'Hi {{name}}, this is Example Dental. Please call us back.' },
};

describe('answering-machine detection', () => {
  it('a person: the agent speaks at once, and the wait is measured', async () => {
    const { callee, record } = await call({ to: '+12125550101', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('human');
    expect(callee.heard.length).toBeGreaterThan(0);
    expect(record.outbound).toMatchObject({ answeredBy: 'human', amdVerdict: 'human', campaign: null });
    expect(record.turns[0]).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^Thank you for calling/),
    });
    expect(record.turns[0]!.heardMs).toBeGreaterThan(0);
    expect(record.endReason).toBe('caller_hangup');
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/callbridge_amd_verdicts_total\{[^}]*verdict="human"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/callbridge_amd_human_wait_seconds_count\{[^}]*carrier="twilio"[^}]*\} [1-9]/);
  }, 30_000);

  it('a machine with a beep: the voicemail is heard to its end after the beep, then the call hangs up', async () => {
    const { callee, record } = await call({ to: '+12125550150', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('machine_end_beep');
    expect(record.endReason).toBe('voicemail_left');
    expect(record.outbound).toMatchObject({ answeredBy: 'machine', amdVerdict: 'machine_end_beep' });
    // Only the message, its placeholder filled: the greeting the agent had ready was never played.
    expect(record.turns).toEqual([
      expect.objectContaining({
        role: 'assistant',
        content: 'Hi Ada, this is Example Dental. Please call us back.',
      }),
    ]);
    const message = record.turns[0]!;
    expect(message.heardMs).toBe(message.sentMs);
    // What the machine recorded is the message, all of it, and nothing else (8 bytes per ms).
    expect(Math.abs(callee.heard.length / 8 - message.sentMs!)).toBeLessThan(100);
  }, 30_000);

  it('a machine in hang-up mode: the call ends as `machine` and the machine hears nothing', async () => {
    const { callee, record } = await call({ to: '+12125550155', amd: { mode: 'hangup' } });
    expect(record.endReason).toBe('machine');
    expect(record.turns).toEqual([]);
    expect(callee.heard.length).toBe(0);
  }, 30_000);

  it('an unsure verdict is a person: the agent speaks', async () => {
    const { callee, record } = await call({ to: '+12125550142', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('unknown');
    expect(record.outbound).toMatchObject({ answeredBy: 'unknown' });
    expect(record.endReason).not.toBe('machine');
    expect(record.turns[0]).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^Thank you for calling/),
    });
    expect(callee.heard.length).toBeGreaterThan(0);
  }, 30_000);

  it('without detection the agent speaks as soon as the call is answered, and no verdict is asked for', async () => {
    const { callee, record } = await call({ to: '+12125550100' });
    expect(callee.verdict).toBeNull();
    expect(record.outbound).toMatchObject({ answeredBy: null, amdVerdict: null });
    expect(callee.heard.length).toBeGreaterThan(0);
  }, 30_000);

  it('a machine with a pre-recorded voicemail: the recording is heard to its end, fetched once for every call', async () => {
    const audioUrl = `${filesUrl}/message.wav`;
    for (const to of ['+12125550150', '+12125550151']) {
      const { callee, record } = await call({ to, amd: { mode: 'voicemail', voicemail: { audioUrl } } });
      expect(callee.verdict).toBe('machine_end_beep');
      expect(record.endReason).toBe('voicemail_left');
      expect(record.outbound).toMatchObject({
        answeredBy: 'machine',
        voicemail: { left: 'recording', problem: null },
      });
      // The agent said nothing: the machine recorded the file, byte for byte, and at most a frame of padding.
      expect(record.turns).toEqual([]);
      expect(callee.heard.subarray(0, MESSAGE.length).equals(MESSAGE)).toBe(true);
      expect(callee.heard.length - MESSAGE.length).toBeLessThan(160);
    }
    expect(fetched.filter((path) => path === '/message.wav')).toHaveLength(1);
  }, 30_000);

  it.each([
    [
      'cannot be fetched',
      async () => `http://127.0.0.1:${await freePort()}/gone.wav`,
      /^fetching the recording failed/,
    ],
    [
      'is missing',
      async () => `${filesUrl}/missing.wav`,
      /^fetching the recording failed: the server did not answer with the file$/,
    ],
    ['is no WAV', async () => `${filesUrl}/notes.txt`, /^the recording is not a WAV the server can read/],
  ])(
    'a recording that %s: with no text to fall back to, the call hangs up as `machine`, the reason recorded',
    async (_, url, reason) => {
      const { callee, record } = await call({
        to: '+12125550153',
        amd: { mode: 'voicemail', voicemail: { audioUrl: await url() } },
      });
      expect(callee.verdict).toBe('machine_end_beep');
      expect(record.endReason).toBe('machine');
      expect(record.outbound?.voicemail).toEqual({ left: null, problem: expect.stringMatching(reason) });
      expect(callee.heard.length).toBe(0);
    },
    30_000,
  );

  it('a recording that is missing, with a text beside it: the text is spoken instead, heard to its end', async () => {
    const { callee, record } = await call({
      to: '+12125550154',
      variables: { name: 'Ada' },
      amd: { mode: 'voicemail', voicemail: { ...VOICEMAIL.voicemail, audioUrl: `${filesUrl}/absent.wav` } },
    });
    expect(callee.verdict).toBe('machine_end_beep');
    expect(record.endReason).toBe('voicemail_left');
    expect(record.outbound?.voicemail).toEqual({
      left: 'agent',
      problem: expect.stringMatching(
        /^fetching the recording failed: the server did not answer with the file$/,
      ),
    });
    expect(record.turns).toEqual([
      expect.objectContaining({
        role: 'assistant',
        content: 'Hi Ada, this is Example Dental. Please call us back.',
      }),
    ]);
    expect(callee.heard.length).toBeGreaterThan(0);
  }, 30_000);

  it('campaigns: a recording left is `voicemail_left`; one that cannot be fetched is `machine` with its reason', async () => {
    const admin = async (path: string, body?: unknown, type = 'application/json') =>
      fetch(`${server.baseUrl}/v1${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': type }),
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      });
    const run = async (audioUrl: string, phone: string) => {
      const created = await admin('/campaigns', {
        name: `recorded ${phone}`,
        retry: { maxAttempts: 1 },
        amd: { mode: 'voicemail', voicemail: { audioUrl } },
      });
      const campaign = (await created.json()) as { id: string; amd: unknown };
      expect(created.status, JSON.stringify(campaign)).toBe(201);
      expect(campaign.amd).toEqual({ mode: 'voicemail', voicemail: { audioUrl } });
      const heard = new Promise<SimCalleeResult>((resolve) => ended.set(`campaign ${phone}`, resolve));
      await admin(`/campaigns/${campaign.id}/contacts`, `phone\n${phone}\n`, 'text/csv');
      expect((await admin(`/campaigns/${campaign.id}/start`, {})).status).toBe(200);
      const callee = await heard;
      for (let i = 0; i < 100; i++) {
        const page = (await (await admin(`/campaigns/${campaign.id}/contacts`)).json()) as {
          contacts: Array<{
            state: string;
            outcome: string | null;
            attempts: Array<{ reason: string | null }>;
          }>;
        };
        if (page.contacts[0]?.state === 'done') return { callee, contact: page.contacts[0] };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`the campaign calling ${phone} did not finish`);
    };
    const [left, dead] = await Promise.all([
      run(`${filesUrl}/message.wav`, '+12125550156'),
      run(`${filesUrl}/missing-too.wav`, '+12125550157'),
    ]);
    expect(left.contact.outcome).toBe('voicemail_left');
    expect(left.callee.heard.subarray(0, MESSAGE.length).equals(MESSAGE)).toBe(true);
    expect(dead.contact.outcome).toBe('machine');
    expect(dead.contact.attempts[0]?.reason).toBe(
      'fetching the recording failed: the server did not answer with the file',
    );
    expect(dead.callee.heard.length).toBe(0);
  }, 60_000);
});
