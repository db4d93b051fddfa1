// A campaign's or a call's voicemail `audioUrl` is fetched only from public addresses or the hosts
// FETCH_ALLOWED_HOSTS names: through the running server, no URL a caller writes (loopback in any
// spelling, a name for it, a redirect to it, the cloud metadata address) opens a connection to a
// listener on loopback, and the call's record names the rule, never what a remote answered. An
// allowed host is still fetched and its recording left.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeWavMulaw } from '../../src/audio/wav-writer.js';
import { startLocalAgent, type LocalAgent } from '../../src/sim/agent/server.js';
import { type SimCalleeResult, simulatedCallee } from '../../src/sim/callee/answer.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import type { CallRecord } from '../../src/store/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { simulatedCalleeEnv } from '../helpers/simulation.js';

const TOKEN = 'admin-token-for-fetch-policy-tests';
/** Half a second of μ-law silence-ish tone, as the operator's recording. */
const MESSAGE = Buffer.alloc(4000, 0x55);

let agent: LocalAgent;
let sim: SimulatedCarrierApi;
let server: TestServer;
/** The operator's file server, on 127.0.0.2: the host FETCH_ALLOWED_HOSTS lets through. */
let files: Server;
let filesUrl: string;
/** A listener on 127.0.0.1 that stands for anything private: it must never see a connection. */
let trap: Server;
let trapPort: number;
let trapConnections = 0;
const ended = new Map<string, (result: SimCalleeResult) => void>();

beforeAll(async () => {
  agent = await startLocalAgent({ apiKeys: ['local'] });
  trap = createServer((_, res) => res.writeHead(401).end('admin API: bearer token required'));
  trap.on('connection', () => (trapConnections += 1));
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as AddressInfo).port;
  files = createServer((req, res) => {
    if (req.url === '/message.wav')
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(writeWavMulaw(MESSAGE));
    else res.writeHead(302, { location: `http://127.0.0.1:${trapPort}/latest/meta-data/` }).end();
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.2', resolve));
  filesUrl = `http://127.0.0.2:${(files.address() as AddressInfo).port}`;
  sim = await startSimulatedCarrierApi({
    onPlaced: simulatedCallee({
      timeScale: 0.1,
      env: simulatedCalleeEnv(),
      onCallEnded: (result) => ended.get(result.callSid)?.(result),
    }),
  });
  server = await startServer(
    { AGENT_URL: agent.url, AGENT_API_KEY: 'local', ADMIN_TOKEN: TOKEN, FETCH_ALLOWED_HOSTS: '127.0.0.2' },
    { simulatedCarrierApiUrl: sim.url },
  );
}, 30_000);

afterAll(async () => {
  await server?.close();
  await sim?.close();
  await agent?.close();
  for (const s of [files, trap]) {
    s?.closeAllConnections();
    await new Promise((resolve) => s?.close(resolve));
  }
});

/** A call to a voicemail (the number plan's 50-59) leaving the recording at `audioUrl`; its record. */
async function voicemailCall(to: string, audioUrl: string): Promise<CallRecord> {
  const res = await fetch(`${server.baseUrl}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to, amd: { mode: 'voicemail', voicemail: { audioUrl } } }),
  });
  const placed = (await res.json()) as { callSid: string };
  expect(res.status, JSON.stringify(placed)).toBe(201);
  await new Promise<SimCalleeResult>((resolve) => ended.set(placed.callSid, resolve));
  for (let i = 0; i < 100; i++) {
    const record = await server.store.getCallRecord(placed.callSid);
    if (record) return record;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no record for ${placed.callSid}`);
}

describe('the voicemail audioUrl through the fetch policy', () => {
  const post = (path: string, body: unknown) =>
    fetch(`${server.baseUrl}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('refuses a private address written in any form at once, as a call and as a campaign, naming the rule', async () => {
    const urls = [
      `http://127.0.0.1:${trapPort}/v1/calls`,
      `http://0x7f000001:${trapPort}/`,
      `http://2130706433:${trapPort}/`,
      `http://017700000001:${trapPort}/`,
      `http://[::ffff:127.0.0.1]:${trapPort}/`,
      `http://127.0.0.1:${new URL(server.baseUrl).port}/v1/calls`,
      'http://169.254.169.254/latest/meta-data/',
    ];
    for (const audioUrl of urls) {
      const amd = { mode: 'voicemail', voicemail: { audioUrl } };
      for (const answer of [
        await post('/calls', { to: '+12125550150', amd }),
        await post('/campaigns', { name: 'voicemail', amd }),
      ]) {
        expect(answer.status, audioUrl).toBe(400);
        const { error } = (await answer.json()) as { error: { code: string; message: string } };
        expect(error.code).toBe('CALLBRIDGE_BAD_REQUEST');
        expect(error.message).toMatch(
          /^amd\.voicemail\.audioUrl: refused by the fetch policy: \S+ is not a public address \(only public addresses, or hosts in FETCH_ALLOWED_HOSTS\)$/,
        );
      }
    }
    expect(trapConnections).toBe(0);
  });

  it('refuses a recording consent audioUrl at a private address at once, as a call and as a campaign', async () => {
    // Issue 30: the consent's audioUrl was accepted at request time and refused only when fetched.
    for (const audioUrl of [`http://127.0.0.1:${trapPort}/consent.wav`, 'http://169.254.169.254/x.wav']) {
      const recording = { enabled: true, consent: { audioUrl }, retentionDays: 1 };
      for (const answer of [
        await post('/calls', { to: '+12125550150', recording }),
        await post('/campaigns', { name: 'consent', recording }),
      ]) {
        expect(answer.status, audioUrl).toBe(400);
        const { error } = (await answer.json()) as { error: { message: string } };
        expect(error.message).toMatch(
          /^recording\.consent\.audioUrl: refused by the fetch policy: \S+ is not a public address/,
        );
      }
    }
    // An allowed host is accepted at request time.
    const allowed = await post('/campaigns', {
      name: 'consent allowed',
      recording: { enabled: true, consent: { audioUrl: `${filesUrl}/message.wav` }, retentionDays: 1 },
    });
    expect(allowed.status).toBe(201);
    expect(trapConnections).toBe(0);
  });

  it('refuses, when fetching, a name for loopback and a redirect to it: no connection, the rule in the record', async () => {
    const urls = [`http://localhost:${trapPort}/`, `${filesUrl}/redirect-to-loopback.wav`];
    const records = await Promise.all(urls.map((url, i) => voicemailCall(`+1212555015${i}`, url)));
    for (const [i, record] of records.entries()) {
      expect(record.endReason, urls[i]).toBe('machine');
      const problem = record.outbound?.voicemail?.problem ?? '';
      expect(problem, urls[i]).toMatch(
        /^fetching the recording was refused by the fetch policy: \S+ (is not a public address|resolves to an address that is not public) \(only public addresses, or hosts in FETCH_ALLOWED_HOSTS\)$/,
      );
      expect(problem).not.toMatch(/HTTP|401|bearer/i);
    }
    expect(trapConnections).toBe(0);
  }, 60_000);

  it('fetches the allowed host and leaves its recording', async () => {
    const record = await voicemailCall('+12125550159', `${filesUrl}/message.wav`);
    expect(record.endReason).toBe('voicemail_left');
    expect(record.outbound?.voicemail).toEqual({ left: 'recording', problem: null });
  }, 30_000);
});
