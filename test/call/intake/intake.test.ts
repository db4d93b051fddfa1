// The call intake, carrier-neutral: a carrier the core has never heard of (test/helpers/
// fake-carrier.ts) is served beside Twilio; stream tokens travel in the media URL's path, bound to
// their carrier and instance; junk, oversize and undecodable frames before `start`, and formats
// that cannot be carried, are refused and counted before any agent is dialed.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MULAW_8K } from '../../../src/audio/format.js';
import { fallbackAudio } from '../../../src/call/session/fallback-audio.js';
import type { ForeignStream } from '../../../src/call/stream/media-socket.js';
import { issueStreamToken } from '../../../src/call/intake/stream-token.js';
import { createTwilioAdapter } from '../../../src/carriers/twilio/adapter.js';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { createFakeCarrier, FAKE_UPGRADE_HEADER } from '../../helpers/fake-carrier.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { localStreamUrl, newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

const UPGRADE_KEY = 'fake-carrier-upgrade-key';

let agent: FakeAgent | undefined;
let server: TestServer | undefined;
const sockets: WebSocket[] = [];

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await server?.close();
  await agent?.close();
  server = undefined;
  agent = undefined;
});

let released: ForeignStream[] = [];

async function setUp(env: Record<string, string> = {}) {
  agent = await startFakeAgent();
  released = [];
  server = await startServer(
    { AGENT_URL: agent.url, AGENT_API_KEY: 'key', AGENT_PREWARM: 'false', ...env },
    {
      carriers: (config) => [createTwilioAdapter(config), createFakeCarrier({ upgradeKey: UPGRADE_KEY })],
      releaseRemotePrewarm: (stream) => released.push(stream),
    },
  );
  return server;
}

async function metric(name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${server!.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

interface Stream {
  ws: WebSocket;
  received: Array<{ data: Buffer; isBinary: boolean }>;
  closed: Promise<{ code: number; reason: string }>;
}

async function connect(
  url: string,
  headers: Record<string, string> = { [FAKE_UPGRADE_HEADER]: UPGRADE_KEY },
) {
  const ws = new WebSocket(url, { headers });
  sockets.push(ws);
  ws.on('error', () => {});
  const received: Stream['received'] = [];
  ws.on('message', (data: Buffer, isBinary) => received.push({ data, isBinary }));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, received, closed };
}

async function announceFake(callId: string, body: Record<string, unknown> = {}) {
  const res = await fetch(`${server!.baseUrl}/carriers/fake/call`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ callId, ...body }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { url: string; profile: string };
}

const localUrl = (publicUrl: string) => localStreamUrl(server!.baseUrl, publicUrl);

describe('carriers are plugged in, not written into the core', () => {
  it('lists every adapter and its media path on GET /', async () => {
    await setUp();
    const info = (await (await fetch(`${server!.baseUrl}/`)).json()) as Record<string, unknown>;
    expect(info.carriers).toEqual(['twilio', 'fake']);
    expect(info.media).toEqual({ twilio: '/media/twilio', fake: '/media/fake' });
    expect(info.instance).toBe(server!.config.instanceId);
  });

  it("bridges a call of a carrier the core has never heard of, the token only in the media URL's path", async () => {
    await setUp();
    const callId = `fake-${randomBytes(6).toString('hex')}`;
    const { url } = await announceFake(callId);
    expect(url).toMatch(
      new RegExp(`^ws://127\\.0\\.0\\.1:\\d+/media/fake/${server!.config.instanceId}/v1\\.`),
    );
    const stream = await connect(localUrl(url));
    stream.ws.send(JSON.stringify({ event: 'start', callId }));
    const conn = await agent!.nextConnection();
    await conn.waitFor('Settings');
    conn.send({ type: 'SettingsApplied' });
    const caller = randomBytes(320);
    stream.ws.send(caller, { binary: true });
    expect((await conn.waitForAudio(320)).equals(caller)).toBe(true);
    stream.ws.send(JSON.stringify({ event: 'stop' }));
    expect((await stream.closed).code).toBe(1000);
    // The record names the carrier, and the instance and region that carried the call.
    await expect
      .poll(() => server!.store.getCallRecord(callId))
      .toMatchObject({
        carrier: 'fake',
        instance: server!.config.instanceId,
        region: 'global',
      });
  });

  it("counts an upgrade the adapter refuses, with the adapter's reason, and dials no agent", async () => {
    await setUp();
    const { url } = await announceFake(`fake-${randomBytes(6).toString('hex')}`);
    const ws = new WebSocket(localUrl(url), { headers: { [FAKE_UPGRADE_HEADER]: 'wrong' } });
    ws.on('error', () => {});
    sockets.push(ws);
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
    });
    expect(status).toBe(401);
    expect(
      await metric('callbridge_carrier_requests_rejected_total', 'carrier="fake",reason="unauthorized"'),
    ).toBe(1);
    expect(agent!.connections).toHaveLength(0);
  });
});

describe('stream tokens', () => {
  it("refuses a token issued for another carrier's call, before any agent is dialed", async () => {
    await setUp();
    const callSid = newCallSid();
    // Twilio prepared this call; the same id presented on the fake carrier's media path is not it.
    const answer = await voiceWebhook(server!.baseUrl, { CallSid: callSid, From: '+1500', To: '+1501' });
    const token = answer.parameters.token!;
    const stream = await connect(`${server!.baseUrl.replace('http', 'ws')}/media/fake/any/${token}`);
    stream.ws.send(JSON.stringify({ event: 'start', callId: callSid }));
    expect(await stream.closed).toEqual({ code: 1008, reason: 'token_wrong_carrier' });
    expect(agent!.connections).toHaveLength(0);
  });

  it('prefers the in-band token and falls back to the path token', async () => {
    await setUp();
    const callSid = newCallSid();
    const answer = await voiceWebhook(server!.baseUrl, { CallSid: callSid, From: '+1500', To: '+1501' });
    // No <Parameter> echoed back: the path alone admits the stream.
    const carrier = await openMediaStream(localUrl(answer.streamUrl), { callSid });
    carrier.start({});
    const conn = await agent!.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    carrier.stop();
    await carrier.closed;
  });

  it('refuses a malformed path token that is not one of ours', async () => {
    await setUp();
    const callSid = newCallSid();
    const carrier = await openMediaStream(
      `${server!.baseUrl.replace('http', 'ws')}/media/twilio/x/not-a-token`,
      {
        callSid,
      },
    );
    carrier.start({});
    expect(await carrier.closed).toEqual({ code: 1008, reason: 'token_malformed' });
    expect(agent!.connections).toHaveLength(0);
  });
});

describe('instances', () => {
  const foreignToken = (callSid: string) =>
    issueStreamToken(
      server!.config.streamTokenSecret,
      {
        carrier: 'fake',
        callSid,
        profile: 'default',
        from: '+15005550006',
        to: '+15005550001',
        direction: 'inbound',
        instance: 'other-instance',
      },
      30_000,
    );

  it('carries a stream another instance prepared, with a fresh dial, and tells that instance', async () => {
    await setUp();
    const callId = `fake-${randomBytes(6).toString('hex')}`;
    const base = server!.baseUrl.replace('http', 'ws');
    const stream = await connect(`${base}/media/fake/other-instance/${foreignToken(callId)}`);
    stream.ws.send(JSON.stringify({ event: 'start', callId }));
    const conn = await agent!.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    expect(released).toEqual([{ instance: 'other-instance', carrier: 'fake', callSid: callId }]);
    stream.ws.send(JSON.stringify({ event: 'stop' }));
    await stream.closed;
  });

  it('declines a stream another instance prepared while this one drains, politely, and carries its own', async () => {
    await setUp();
    const own = `fake-${randomBytes(6).toString('hex')}`;
    const { url } = await announceFake(own);
    server!.app.callbridge.draining = true;

    const callId = `fake-${randomBytes(6).toString('hex')}`;
    const base = server!.baseUrl.replace('http', 'ws');
    const foreign = await connect(`${base}/media/fake/other-instance/${foreignToken(callId)}`);
    foreign.ws.send(JSON.stringify({ event: 'start', callId }));
    // The caller hears the decline message, whole, before the line is closed; no agent is dialed.
    expect(await foreign.closed).toEqual({ code: 1000, reason: 'call ended' });
    const heard = Buffer.concat(foreign.received.map((frame) => frame.data));
    const message = fallbackAudio(undefined, MULAW_8K)!;
    expect(heard.subarray(0, message.length).equals(message)).toBe(true);
    expect(heard.subarray(message.length).every((byte) => byte === 0xff)).toBe(true);
    expect(await metric('callbridge_calls_declined_total', 'carrier="fake",reason="draining"')).toBe(1);
    expect(agent!.connections).toHaveLength(0);
    // The stream will never reach the instance that prepared it: its pre-warmed agent is released.
    expect(released).toEqual([{ instance: 'other-instance', carrier: 'fake', callSid: callId }]);

    // A call this instance answered before draining is carried to its end.
    const stream = await connect(localUrl(url));
    stream.ws.send(JSON.stringify({ event: 'start', callId: own }));
    expect((await (await agent!.nextConnection()).waitFor('Settings')).type).toBe('Settings');
  });
});

describe('junk before start', () => {
  it.each([
    ['readable frames that are not start', () => JSON.stringify({ event: 'connected' })],
    ['media frames', () => randomBytes(160)],
  ])('closes a stream sending %s by the thousand, counted, with no agent dialed', async (_name, frame) => {
    // Once only unreadable frames counted: tens of thousands of media frames before start were kept.
    await setUp();
    const stream = await connect(`${server!.baseUrl.replace('http', 'ws')}/media/fake`);
    for (let i = 0; i < 2_000 && stream.ws.readyState === WebSocket.OPEN; i++) stream.ws.send(frame());
    expect(await stream.closed).toEqual({ code: 1008, reason: 'frames_before_start' });
    expect(await metric('callbridge_streams_rejected_total', 'reason="frames_before_start"')).toBe(1);
    expect(agent!.connections).toHaveLength(0);
  });

  it('counts a stream closed for a frame over the size limit (1009) as refused', async () => {
    await setUp();
    const stream = await connect(`${server!.baseUrl.replace('http', 'ws')}/media/fake`);
    stream.ws.send(Buffer.alloc(200_000), { binary: true });
    expect((await stream.closed).code).toBe(1009);
    await expect
      .poll(() => metric('callbridge_streams_rejected_total', 'carrier="fake",reason="frame_too_large"'))
      .toBe(1);
  });

  it('counts a stream closed for text that is not UTF-8 (1007) as refused', async () => {
    await setUp();
    const stream = await connect(`${server!.baseUrl.replace('http', 'ws')}/media/fake`);
    stream.ws.send(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { binary: false });
    expect((await stream.closed).code).toBe(1007);
    await expect
      .poll(() => metric('callbridge_streams_rejected_total', 'carrier="fake",reason="invalid_utf8"'))
      .toBe(1);
  });
});

describe('media formats', () => {
  it.each([
    ['an absurd sample rate', { encoding: 'mulaw', sampleRate: 9e15, channels: 1 }],
    ['a rate no phone line streams', { encoding: 'linear16', sampleRate: 44100, channels: 1 }],
    ['stereo', { encoding: 'mulaw', sampleRate: 8000, channels: 2 }],
  ])('refuses %s at start, counted, with no agent dialed', async (_name, format) => {
    // `sampleRate: 9e15` once threw inside the silence monitor of a live call.
    await setUp();
    const callId = `fake-${randomBytes(6).toString('hex')}`;
    const { url } = await announceFake(callId);
    const stream = await connect(localUrl(url));
    stream.ws.send(JSON.stringify({ event: 'start', callId, format }));
    expect(await stream.closed).toEqual({ code: 1003, reason: 'unsupported_format' });
    expect(await metric('callbridge_streams_rejected_total', 'reason="unsupported_format"')).toBe(1);
    expect(agent!.connections).toHaveLength(0);
  });

  it('dials no pre-warmed agent for a format that cannot be carried', async () => {
    await setUp({ AGENT_PREWARM: 'true' });
    await announceFake(`fake-${randomBytes(6).toString('hex')}`, {
      format: { ...MULAW_8K, sampleRate: 9e15 },
    });
    await announceFake(`fake-${randomBytes(6).toString('hex')}`, {
      format: { ...MULAW_8K, sampleRate: 16000 },
    });
    // Only the second, carriable call got an agent.
    await agent!.nextConnection();
    expect(agent!.connections).toHaveLength(1);
  });
});

describe('pre-warmed agents', () => {
  it('counts a pre-warmed agent replaced by a second preparation of its call, and closes it', async () => {
    // A second preparation once closed the first pre-warmed session without counting it anywhere.
    // The fake carrier prepares every announcement (a carrier's webhook prepares once: below).
    await setUp({ AGENT_PREWARM: 'true' });
    const callId = `fake-${randomBytes(6).toString('hex')}`;
    await announceFake(callId);
    const first = await agent!.nextConnection();
    await announceFake(callId);
    await agent!.nextConnection();
    expect(await metric('callbridge_prewarm_sessions_total', 'outcome="replaced"')).toBe(1);
    await first.closed;
  });

  it('answers a replayed signed voice webhook as the first, with no second agent or token', async () => {
    // Issue 30: each replay of a signed webhook returned a fresh stream URL, observer token and agent.
    const authToken = 'twilio-auth-token-of-the-intake-test';
    await setUp({
      AGENT_PREWARM: 'true',
      TWILIO_ACCOUNT_SID: `AC${'1'.repeat(32)}`,
      TWILIO_AUTH_TOKEN: authToken,
    });
    const params = { CallSid: newCallSid(), From: '+1500', To: '+1501' };
    const first = await voiceWebhook(server!.baseUrl, params, { authToken });
    await agent!.nextConnection();
    const again = await voiceWebhook(server!.baseUrl, params, { authToken });
    expect(again.status).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.observer).toBe(first.observer);
    // A second pre-warm would have replaced the first in the pool as the answer was made.
    expect(await metric('callbridge_prewarm_sessions_total', 'outcome="replaced"')).toBe(0);
    expect(server!.app.callbridge.prewarm.size).toBe(1);
  });

  it('hands the pre-warmed agent over only for the format it was dialed for', async () => {
    await setUp({ AGENT_PREWARM: 'true' });
    const callId = `fake-${randomBytes(6).toString('hex')}`;
    const { url } = await announceFake(callId, {
      format: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
    });
    const prewarmed = await agent!.nextConnection();
    const settings = await prewarmed.waitFor('Settings');
    expect((settings.audio as { input: unknown }).input).toEqual({
      encoding: 'linear16',
      sample_rate: 16000,
    });
    const stream = await connect(localUrl(url));
    stream.ws.send(
      JSON.stringify({
        event: 'start',
        callId,
        format: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
      }),
    );
    prewarmed.send({ type: 'SettingsApplied' });
    const caller = randomBytes(640);
    stream.ws.send(caller, { binary: true });
    expect((await prewarmed.waitForAudio(640)).equals(caller)).toBe(true);
    expect(agent!.connections).toHaveLength(1);
    expect(await metric('callbridge_prewarm_sessions_total', 'outcome="used"')).toBe(1);
  });
});
