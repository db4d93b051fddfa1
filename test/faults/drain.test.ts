// SIGTERM on the real process (`node dist/main.js`) with calls in flight: readiness turns 503, new
// calls are declined at the voice webhook, live calls run to their end (or, past DRAIN_TIMEOUT_MS,
// are ended politely), and the process exits 0; a second SIGTERM ends it at once.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SHUTDOWN_FAREWELL } from '../../src/call/session/session.js';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import {
  type CarrierStreamClient,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { ensureBuilt, type ServerProcess, spawnServer, status } from '../helpers/server-process.js';

const API_KEY = 'drain-test-agent-key-0123456789';
const FRAME_BYTES = 160;
const FRAME_MS = 20;
const MULAW_SILENCE = Buffer.alloc(FRAME_BYTES, 0xff);
/** Bounds on polling loops: long enough for a loaded 2-core machine, short enough to fail clearly. */
const POLL_LIMIT_MS = 10_000;

let agent: FakeAgent;
let server: ServerProcess | undefined;
const carriers: CarrierStreamClient[] = [];

beforeAll(ensureBuilt, 120_000);

beforeEach(async () => {
  agent = await startFakeAgent({ autoApply: true });
});

afterEach(async () => {
  for (const carrier of carriers.splice(0)) carrier.ws.terminate();
  await server?.dispose();
  server = undefined;
  await agent.close();
});

/** Webhooks are signed: only a verified call pre-warms its agent (docs/security.md). */
const TWILIO_TOKEN = 'drain-faults-twilio-auth-token-00001';
const SIGNED = { authToken: TWILIO_TOKEN };

async function start(env: Record<string, string>): Promise<ServerProcess> {
  server = await spawnServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: API_KEY,
    TWILIO_ACCOUNT_SID: `AC${'f'.repeat(32)}`,
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    TWILIO_API_URL: 'http://127.0.0.1:9',
    ...env,
  });
  return server;
}

interface LiveCall {
  callSid: string;
  carrier: CarrierStreamClient;
  conn: AgentConnection;
  /** Every caller frame sent on this call, in order. */
  callerSent: Buffer[];
}

/** A call through the webhook and the media stream, live on both sides (caller audio reaches the agent). */
async function liveCall(base: string): Promise<LiveCall> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(
    base,
    { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
    SIGNED,
  );
  expect(answer.body).toContain('<Connect><Stream');
  // Calls are placed one at a time, so the next agent connection is this call's (pre-warmed) one.
  const conn = await agent.nextConnection();
  const settings = await conn.waitFor('Settings');
  expect(settings.tags).toContain(`call:${callSid}`);
  const carrier = await openMediaStream(answer.streamUrl, { callSid, ...SIGNED });
  carriers.push(carrier);
  carrier.start(answer.parameters);
  const callerSent = Array.from({ length: 10 }, () => randomBytes(FRAME_BYTES));
  for (const frame of callerSent) carrier.media(frame);
  await conn.waitForAudio(callerSent.length * FRAME_BYTES);
  return { callSid, carrier, conn, callerSent };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends SIGTERM and returns once the server says it is draining (/readyz 503). */
async function sigterm(proc: ServerProcess): Promise<void> {
  proc.child.kill('SIGTERM');
  const deadline = performance.now() + POLL_LIMIT_MS;
  while ((await status(proc.baseUrl, '/readyz')) !== 503) {
    if (performance.now() > deadline)
      throw new Error(`/readyz not 503 within ${POLL_LIMIT_MS} ms of SIGTERM`);
    await sleep(25);
  }
}

/** A new call's voice webhook, while the server drains. */
function newCall(base: string) {
  return voiceWebhook(base, { CallSid: newCallSid(), From: '+15005550006', To: '+15005550001' }, SIGNED);
}

/** `work`, failing at once if the call's media stream closes first. */
function whileUp<T>(call: LiveCall, work: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    work.then(resolve, reject);
    void call.carrier.closed.then(({ code, reason }) =>
      reject(new Error(`call ${call.callSid} ended during the drain: ${code} ${reason}`)),
    );
  });
}

/** Caller audio paced like a phone (one frame per 20 ms) for `frames` frames, recorded in `call`. */
async function speak(call: LiveCall, frames: number): Promise<void> {
  for (let i = 0; i < frames; i++) {
    const frame = randomBytes(FRAME_BYTES);
    call.callerSent.push(frame);
    call.carrier.media(frame);
    await sleep(FRAME_MS);
  }
}

/** An agent reply of `chunks` odd-sized chunks, the way a voice agent streams one; returns the bytes. */
function reply(conn: AgentConnection, chunks: number): Buffer {
  const audio = Array.from({ length: chunks }, (_, i) => randomBytes(100 + ((i * 37) % 300)));
  conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
  for (const chunk of audio) conn.sendAudio(chunk);
  conn.send({ type: 'AgentAudioDone' });
  return Buffer.concat(audio);
}

describe('SIGTERM drain of the real process', () => {
  it('keeps live calls up to their normal end, declines new ones, reports 503 on /readyz, exits 0', async () => {
    // Long enough that the calls below always end by the caller's stop, even on a slow machine.
    const drainTimeoutMs = 20_000;
    const proc = await start({ DRAIN_TIMEOUT_MS: String(drainTimeoutMs) });
    const calls: LiveCall[] = [];
    for (let i = 0; i < 3; i++) calls.push(await liveCall(proc.baseUrl));
    expect(await status(proc.baseUrl, '/readyz')).toBe(200);

    await sigterm(proc);
    expect(await status(proc.baseUrl, '/healthz')).toBe(200);

    const declined = await newCall(proc.baseUrl);
    expect(declined.status).toBe(200);
    expect(declined.body).toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    expect(declined.body).not.toContain('<Connect>');
    expect(declined.body).not.toContain('<Stream');

    // The calls go on for a while after the signal: audio both ways, byte for byte.
    const agentSent = await Promise.all(
      calls.map((call) =>
        whileUp(
          call,
          (async () => {
            const sent = reply(call.conn, 20);
            await speak(call, 75);
            await call.carrier.waitForAudio(sent.length);
            await call.conn.waitForAudio(call.callerSent.length * FRAME_BYTES);
            return sent;
          })(),
        ),
      ),
    );
    expect(await status(proc.baseUrl, '/readyz')).toBe(503);
    expect(await status(proc.baseUrl, '/healthz')).toBe(200);
    expect(proc.child.exitCode).toBeNull();
    calls.forEach((call, i) => {
      expect(call.carrier.audio().equals(agentSent[i]!)).toBe(true);
      expect(call.conn.audioBytes().equals(Buffer.concat(call.callerSent))).toBe(true);
    });

    // Each call ends when its caller hangs up; the last one lets the process go.
    let lastStopAtMs = 0;
    for (const call of calls) {
      expect(proc.child.exitCode).toBeNull();
      lastStopAtMs = performance.now();
      call.carrier.stop();
      expect(await call.carrier.closed).toEqual({ code: 1000, reason: 'stream stopped' });
      await call.conn.closed;
    }
    const exit = await proc.exited;
    expect(exit, proc.output()).toMatchObject({ code: 0, signal: null });
    // It left because the calls ended, not because the drain deadline passed.
    expect(exit.atMs - lastStopAtMs).toBeLessThan(drainTimeoutMs);
    for (const call of calls) {
      expect(call.conn.messages.filter((m) => m.type === 'InjectAgentMessage')).toEqual([]);
    }
  }, 60_000);

  it('ends calls that outlast DRAIN_TIMEOUT_MS politely: the agent says goodbye, the caller hears it', async () => {
    const drainTimeoutMs = 1500;
    const redirect = 'https://overflow.example.com/voice';
    const proc = await start({ DRAIN_TIMEOUT_MS: String(drainTimeoutMs), DECLINE_REDIRECT_URL: redirect });
    const calls: LiveCall[] = [];
    for (let i = 0; i < 2; i++) calls.push(await liveCall(proc.baseUrl));

    // The phone streams silence until the server hangs up, as a real one does.
    let phonesUp = true;
    const phones = calls.map(async (call) => {
      while (phonesUp && call.carrier.ws.readyState === call.carrier.ws.OPEN) {
        call.carrier.media(MULAW_SILENCE);
        await sleep(FRAME_MS);
      }
    });
    // The agent answers the goodbye it is asked for, like a real one.
    const farewells = calls.map(async (call) => {
      const inject = await Promise.race([
        call.conn.waitFor('InjectAgentMessage'),
        call.carrier.closed.then(() => 'the call ended without a goodbye'),
      ]);
      const atMs = performance.now();
      return { inject, atMs, goodbye: typeof inject === 'string' ? Buffer.alloc(0) : reply(call.conn, 12) };
    });

    const signalledAtMs = performance.now();
    await sigterm(proc);
    const declined = await newCall(proc.baseUrl);
    expect(declined.body).toContain(`<Redirect>${redirect}</Redirect>`);
    expect(declined.body).not.toContain('<Connect>');

    for (const [i, call] of calls.entries()) {
      const { inject, atMs, goodbye } = await farewells[i]!;
      // Queued: said after the caller's turn and the reply in progress, never cutting in.
      expect(inject).toEqual({ type: 'InjectAgentMessage', message: SHUTDOWN_FAREWELL, behavior: 'queue' });
      // Not before the deadline: until then the call was left to run.
      expect(atMs - signalledAtMs).toBeGreaterThanOrEqual(drainTimeoutMs - 50);
      // The server hung up, normally, after the goodbye played in full.
      expect(await call.carrier.closed).toEqual({ code: 1000, reason: 'call ended' });
      const heard = call.carrier.audio();
      expect(heard.subarray(heard.length - goodbye.length).equals(goodbye)).toBe(true);
      await call.conn.closed;
    }
    phonesUp = false;
    await Promise.all(phones);
    const exit = await proc.exited;
    expect(exit, proc.output()).toMatchObject({ code: 0, signal: null });
  }, 60_000);

  it('exits at once on a second SIGTERM, without waiting for the drain', async () => {
    const drainTimeoutMs = 120_000;
    const proc = await start({ DRAIN_TIMEOUT_MS: String(drainTimeoutMs) });
    const call = await liveCall(proc.baseUrl);

    await sigterm(proc);
    expect(proc.child.exitCode).toBeNull();
    const secondAtMs = performance.now();
    proc.child.kill('SIGTERM');
    const exit = await proc.exited;
    // It exits by itself (not killed by the signal), long before the drain would have ended.
    expect(exit.signal, proc.output()).toBeNull();
    expect(exit.code).not.toBeNull();
    expect(exit.atMs - secondAtMs).toBeLessThan(drainTimeoutMs / 4);
    // The call was cut, not ended politely.
    expect((await call.carrier.closed).code).toBe(1006);
    expect(call.conn.messages.filter((m) => m.type === 'InjectAgentMessage')).toEqual([]);
  }, 60_000);
});
