// Calls that survive faults, over real sockets: the agent dropping mid-reply, refusing every
// handshake, a carrier that stops answering pings, bad frames, and the capacity guard.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

let agent: FakeAgent | undefined;
let server: TestServer | undefined;

afterEach(async () => {
  await server?.close();
  await agent?.close();
  server = undefined;
  agent = undefined;
});

async function setUp(env: Record<string, string> = {}) {
  agent = await startFakeAgent();
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'key', ...env });
  return { agent, server };
}

async function metricValue(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${server!.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

async function placeCall(to = '+15005550001') {
  const callSid = newCallSid();
  const answer = await voiceWebhook(server!.baseUrl, { CallSid: callSid, From: '+15005550006', To: to });
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start(answer.parameters);
  return { callSid, answer, carrier };
}

const until = async (predicate: () => boolean) => {
  while (!predicate()) await new Promise((r) => setTimeout(r, 10));
};

describe('agent reconnection', () => {
  it('redials at once when the agent drops mid-reply, with the heard history and no second greeting', async () => {
    const { agent } = await setUp();
    const { callSid, carrier } = await placeCall();
    const first = await agent.nextConnection();
    expect(((await first.waitFor('Settings')).agent as { greeting?: string }).greeting).toBeTruthy();
    first.send({ type: 'SettingsApplied' });
    first.send({ type: 'ConversationText', role: 'user', content: 'Where is my order?' });
    first.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
    first.send({ type: 'ConversationText', role: 'assistant', content: 'Let me check that for you.' });
    // A second of audio: the first progress mark follows it.
    for (let i = 0; i < 10; i++) first.sendAudio(randomBytes(800));
    await carrier.waitForAudio(8000);
    await until(() => carrier.received.filter((m) => m.event === 'mark').length > 0);
    await new Promise((r) => setTimeout(r, 50)); // the marks' echoes are back: the reply was heard
    first.socket.terminate(); // dropped, no Error

    const second = await agent.nextConnection();
    const settings = await second.waitFor('Settings');
    const agentSettings = settings.agent as { greeting?: string; context?: { messages: unknown[] } };
    expect(agentSettings.greeting).toBeUndefined();
    expect(agentSettings.context?.messages).toEqual([
      { type: 'History', role: 'user', content: 'Where is my order?' },
      { type: 'History', role: 'assistant', content: 'Let me check that for you.' },
    ]);
    // Caller audio sent during the gap is held and delivered, in order, once the new session is ready.
    const during = randomBytes(320);
    carrier.media(during);
    second.send({ type: 'SettingsApplied' });
    const after = randomBytes(320);
    carrier.media(after);
    expect((await second.waitForAudio(640)).equals(Buffer.concat([during, after]))).toBe(true);
    // And the call goes on: the new agent's audio reaches the caller.
    second.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
    const reply = randomBytes(480);
    second.sendAudio(reply);
    const heard = await carrier.waitForAudio(8000 + 480);
    expect(heard.subarray(8000).equals(reply)).toBe(true);
    expect(await metricValue('callbridge_agent_reconnects_total', 'outcome="ok"')).toBe(1);
    carrier.stop();
    await carrier.closed;
    expect((await server!.store.getCallRecord(callSid))?.endReason).toBe('caller_hangup');
  });

  it('redials after a retryable agent Error, and ends the call after a fatal one', async () => {
    const { agent } = await setUp();
    const { carrier } = await placeCall();
    const first = await agent.nextConnection();
    first.send({ type: 'SettingsApplied' });
    first.send({ type: 'Error', code: 'INTERNAL_SERVER_ERROR', description: 'try again' });
    const second = await agent.nextConnection();
    await second.waitFor('Settings');
    second.send({ type: 'SettingsApplied' });
    second.send({ type: 'Error', code: 'INVALID_SETTINGS', description: 'no' });
    const closed = await carrier.closed;
    expect(closed.code).toBe(1000);
    expect(await metricValue('callbridge_calls_total', 'reason="agent_error"')).toBe(1);
  });
});

describe('refused handshakes', () => {
  it('plays the fallback message and ends the call when the agent answers 429 every time, leaving no socket open', async () => {
    const { agent, server } = await setUp({ AGENT_PREWARM: 'false' });
    agent.refuseWith(429);
    const { carrier } = await placeCall();
    await carrier.closed;
    expect(carrier.audio().length).toBeGreaterThan(8000); // the pre-rendered fallback phrase
    expect(await metricValue('callbridge_calls_total', 'reason="agent_refused"')).toBe(1);
    expect(await metricValue('callbridge_agent_refused_total')).toBeGreaterThan(1);
    expect(server.app.callbridge.registry.size).toBe(0);
    expect(server.app.websocketServer.clients.size).toBe(0);
    expect(agent.connections).toHaveLength(0);
    // The refusals lowered the admitted concurrency.
    expect(await metricValue('callbridge_admission_limit')).toBeLessThan(1000);
  });
});

describe('dead carrier sockets', () => {
  it('cuts a media socket that stops answering pings, which ends its call and closes its agent', async () => {
    // Long enough that `start` is read before the first unanswered ping cuts the socket, even on a
    // busy machine; the call must exist for its end to be counted.
    const { agent, server } = await setUp({ CARRIER_PING_INTERVAL_MS: '500' });
    const callSid = newCallSid();
    const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+1', To: '+2' });
    const ws = new WebSocket(answer.streamUrl, { autoPong: false });
    const wsClosed = new Promise((resolve) => ws.once('close', resolve));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(
      JSON.stringify({
        event: 'start',
        sequenceNumber: '1',
        streamSid: 'MZ1',
        start: {
          callSid,
          streamSid: 'MZ1',
          mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          customParameters: answer.parameters,
        },
      }),
    );
    const conn = await agent.nextConnection();
    await conn.closed;
    await wsClosed;
    expect(server.app.callbridge.registry.size).toBe(0);
    expect(await metricValue('callbridge_calls_total', 'reason="caller_hangup"')).toBe(1);
  });
});

describe('bad carrier input', () => {
  it('tolerates unreadable frames during a call, counts them, and keeps relaying audio', async () => {
    const { agent } = await setUp();
    const { carrier } = await placeCall();
    const conn = await agent.nextConnection();
    conn.send({ type: 'SettingsApplied' });
    carrier.sendRaw('{not json');
    carrier.sendRaw(JSON.stringify({ event: 'media', media: { payload: '***not base64***' } }));
    carrier.sendRaw(JSON.stringify({ event: 'media', media: { payload: 42 } }));
    carrier.sendRaw(JSON.stringify({ event: 42 }));
    carrier.sendRaw(JSON.stringify({ event: 'nonsense' }));
    carrier.sendRaw(Buffer.from([1, 2, 3]));
    carrier.start({}); // a second start is refused, the call goes on
    const audio = randomBytes(161); // odd length: relayed as is
    carrier.media(audio);
    expect((await conn.waitForAudio(161)).equals(audio)).toBe(true);
    expect(await metricValue('callbridge_carrier_frames_invalid_total', 'reason="unreadable"')).toBe(4);
    expect(await metricValue('callbridge_carrier_frames_invalid_total', 'reason="binary"')).toBe(1);
    expect(await metricValue('callbridge_carrier_frames_invalid_total', 'reason="duplicate_start"')).toBe(1);
    carrier.stop();
    await carrier.closed;
    // Frames after stop are ignored, and the socket is closed normally.
    expect(server!.app.callbridge.registry.size).toBe(0);
  });

  it('closes a socket that sends a frame over the size limit with 1009', async () => {
    await setUp();
    const carrier = await openMediaStream(`${server!.baseUrl.replace('http', 'ws')}/media/twilio`, {
      callSid: newCallSid(),
    });
    carrier.start({ token: 'x'.repeat(200_000) }); // huge custom parameters
    expect((await carrier.closed).code).toBe(1009);
  });

  it('closes a socket that sends only junk before start', async () => {
    await setUp();
    const carrier = await openMediaStream(`${server!.baseUrl.replace('http', 'ws')}/media/twilio`, {
      callSid: newCallSid(),
    });
    for (let i = 0; i < 25; i++) carrier.sendRaw(Buffer.from([i]));
    expect((await carrier.closed).code).toBe(1003);
    expect(agent!.connections).toHaveLength(0);
  });

  it('closes a connection that never finishes its upgrade request (slow loris)', async () => {
    await setUp();
    const { port } = new URL(server!.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /media/twilio HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n');
    // Never the blank line that ends the headers: the server must let go of it by itself.
    await new Promise((resolve) => socket.once('close', resolve));
    expect(server!.app.websocketServer.clients.size).toBe(0);
  });

  it('answers a malformed webhook body with the JSON error shape and no stack trace', async () => {
    await setUp();
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'CallSid=%E0%A4%A'],
      ['application/json', '{"CallSid":'],
      ['text/plain', 'hello'],
    ] as const) {
      const res = await fetch(`${server!.baseUrl}/carriers/twilio/voice`, {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(JSON.parse(text).error.code).toMatch(/^CALLBRIDGE_/);
      expect(text).not.toMatch(/at .*\.(ts|js):\d+/);
    }
  });
});

describe('capacity guard', () => {
  it('declines calls beyond MAX_CALLS politely at the voice webhook, before any agent is dialed', async () => {
    const { agent } = await setUp({ MAX_CALLS: '1' });
    const { carrier } = await placeCall();
    await agent.nextConnection();
    const declined = await voiceWebhook(server!.baseUrl, { CallSid: newCallSid(), From: '+1', To: '+2' });
    expect(declined.status).toBe(200);
    expect(declined.body).toContain('<Say>');
    expect(declined.body).toContain('<Hangup/>');
    expect(declined.body).not.toContain('<Connect>');
    expect(agent.connections).toHaveLength(1);
    expect(await metricValue('callbridge_calls_declined_total', 'reason="at_capacity"')).toBe(1);
    carrier.stop();
    await carrier.closed;
  });

  it('declines new calls while draining, redirecting them when configured', async () => {
    await setUp({ DECLINE_REDIRECT_URL: 'https://standby.example.com/voice' });
    server!.app.callbridge.draining = true;
    const declined = await voiceWebhook(server!.baseUrl, { CallSid: newCallSid(), From: '+1', To: '+2' });
    expect(declined.body).toContain('<Redirect>https://standby.example.com/voice</Redirect>');
    expect(await metricValue('callbridge_calls_declined_total', 'reason="draining"')).toBe(1);
  });
});
