// The core bridge over real sockets: a `ws` client plays Twilio, a scripted fake agent plays the
// voice agent, and callbridge sits between them on an ephemeral port.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

let agent: FakeAgent;
let server: TestServer;
const API_KEY = 'test-agent-key-0123456789';

beforeEach(async () => {
  agent = await startFakeAgent();
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: API_KEY });
});

afterEach(async () => {
  await server.close();
  await agent.close();
});

async function placeCall(to = '+15005550001') {
  const callSid = newCallSid();
  const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+15005550006', To: to });
  expect(answer.status).toBe(200);
  const carrier = await openMediaStream(answer.streamUrl, { callSid });
  carrier.start(answer.parameters);
  const conn = await agent.nextConnection();
  const settings = await conn.waitFor('Settings');
  return { callSid, answer, carrier, conn, settings };
}

function frames(count: number, size = 160): Buffer[] {
  return Array.from({ length: count }, () => randomBytes(size));
}

async function metricValue(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('voice webhook', () => {
  it('answers TwiML that connects a bidirectional stream with a token parameter', async () => {
    const answer = await voiceWebhook(server.baseUrl, {
      CallSid: newCallSid(),
      From: '+15005550006',
      To: '+1555',
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('<Response><Connect><Stream url="ws://127.0.0.1:');
    expect(answer.body).not.toContain('<Start>');
    const token = answer.parameters.token!;
    expect(token).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    // The media URL names this instance and carries the token in its path, which every carrier keeps.
    expect(answer.streamUrl).toBe(
      `${server.baseUrl.replace('http', 'ws')}/media/twilio/${server.config.instanceId}/${token}`,
    );
  });

  it('refuses a webhook without a CallSid', async () => {
    const answer = await voiceWebhook(server.baseUrl, { From: '+15005550006' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
  });
});

describe('agent session', () => {
  it('dials /v1/agent/converse with the API key and sends Settings for μ-law 8 kHz passthrough', async () => {
    const { conn, settings, callSid } = await placeCall();
    expect(conn.path).toBe('/v1/agent/converse');
    expect(conn.headers.authorization).toBe(`Token ${API_KEY}`);
    expect(conn.messages[0]?.type).toBe('Settings');
    expect(settings.audio).toEqual({
      input: { encoding: 'mulaw', sample_rate: 8000 },
      output: { encoding: 'mulaw', sample_rate: 8000, container: 'none' },
    });
    expect(settings.tags).toContain(`call:${callSid}`);
    const agentSettings = settings.agent as Record<string, unknown>;
    expect(agentSettings.greeting).toBe(server.config.profiles.default!.greeting);
    expect((agentSettings.think as { prompt: string }).prompt).toBe(server.config.profiles.default!.prompt);
  });

  it('picks the profile by the called number', async () => {
    const { settings } = await placeCall('+15550100');
    const think = (settings.agent as { think: { prompt: string } }).think;
    expect(think.prompt).toBe(server.config.profiles.sales!.prompt);
  });

  it('sends no caller audio before SettingsApplied, and loses none of it', async () => {
    const { carrier, conn } = await placeCall();
    const early = frames(10);
    for (const f of early) carrier.media(f);
    // Give the frames time to cross the bridge: none may reach the agent yet.
    await new Promise((r) => setTimeout(r, 100));
    expect(conn.audio).toHaveLength(0);
    conn.send({ type: 'SettingsApplied' });
    const late = frames(5);
    for (const f of late) carrier.media(f);
    const got = await conn.waitForAudio(15 * 160);
    expect(got.equals(Buffer.concat([...early, ...late]))).toBe(true);
    const firstAudio = conn.log.findIndex((e) => e.kind === 'audio');
    expect(conn.log.slice(0, firstAudio).map((e) => (e.kind === 'text' ? e.message.type : 'audio'))).toEqual([
      'Settings',
    ]);
  });

  it('relays caller audio to the agent byte-exact', async () => {
    const { carrier, conn } = await placeCall();
    conn.send({ type: 'SettingsApplied' });
    const sent = frames(50);
    for (const f of sent) carrier.media(f);
    const got = await conn.waitForAudio(50 * 160);
    expect(got.equals(Buffer.concat(sent))).toBe(true);
  });

  it('relays agent audio to the caller byte-exact, in 160-byte multiples until the reply ends', async () => {
    const { carrier, conn } = await placeCall();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
    const chunks = [randomBytes(100), randomBytes(333), randomBytes(1000), randomBytes(7)];
    for (const c of chunks) conn.sendAudio(c);
    conn.send({ type: 'AgentAudioDone' });
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const heard = await carrier.waitForAudio(total);
    expect(heard.equals(Buffer.concat(chunks))).toBe(true);
    const sizes = carrier.received
      .filter((m) => m.event === 'media')
      .map((m) => Buffer.from((m.media as { payload: string }).payload, 'base64').length);
    for (const size of sizes.slice(0, -1)) expect(size % 160).toBe(0);
    for (const m of carrier.received.filter((m) => m.event === 'media'))
      expect(m.streamSid).toBe(carrier.streamSid);
  });
});

describe('agent handshake', () => {
  it('loses no agent frame that arrives together with the handshake answer', async () => {
    // Regression: frames in the same packet as the 101 answer were emitted before anyone listened.
    await agent.close();
    const greeting = randomBytes(480);
    agent = await startFakeAgent({
      onConnect: (conn) => {
        conn.send({ type: 'SettingsApplied' });
        conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.1, tts_latency: 0.1, ttt_latency: 0 });
        conn.sendAudio(greeting);
      },
    });
    await server.close();
    server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: API_KEY });
    const { carrier } = await placeCall();
    const heard = await carrier.waitForAudio(greeting.length);
    expect(heard.equals(greeting)).toBe(true);
  });
});

describe('barge-in', () => {
  it('sends clear at once and forwards no more of the interrupted reply', async () => {
    const { carrier, conn } = await placeCall();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
    const reply = randomBytes(8000); // one second: still playing when the caller interrupts
    conn.sendAudio(reply);
    await carrier.waitForAudio(reply.length);
    conn.send({ type: 'UserStartedSpeaking' });
    await carrier.waitFor((m) => m.event === 'clear');
    // The rest of the interrupted reply, still in flight from the agent, must not play.
    conn.sendAudio(randomBytes(1600));
    conn.send({ type: 'AgentAudioDone' });
    // The next reply plays again.
    conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.5, tts_latency: 0.2, ttt_latency: 0.3 });
    const next = randomBytes(320);
    conn.sendAudio(next);
    const heard = await carrier.waitForAudio(reply.length + next.length);
    expect(heard.equals(Buffer.concat([reply, next]))).toBe(true);
    const clearIndex = carrier.received.findIndex((m) => m.event === 'clear');
    expect(carrier.received[clearIndex]).toEqual({ event: 'clear', streamSid: carrier.streamSid });
    expect(await metricValue('callbridge_barge_ins_total')).toBe(1);
  });
});

describe('teardown', () => {
  it('closes the agent socket when the carrier sends stop', async () => {
    const { carrier, conn } = await placeCall();
    conn.send({ type: 'SettingsApplied' });
    carrier.stop();
    await conn.closed;
    await carrier.closed;
    expect(server.app.callbridge.registry.size).toBe(0);
    expect(await metricValue('callbridge_calls_total', 'reason="caller_hangup"')).toBe(1);
  });

  it('closes the agent socket when the carrier socket drops', async () => {
    const { carrier, conn } = await placeCall();
    carrier.ws.terminate();
    await conn.closed;
    expect(await metricValue('callbridge_calls_total', 'reason="caller_hangup"')).toBe(1);
  });

  it('ends the call on a fatal agent Error, after the caller heard the fallback message', async () => {
    const { carrier, conn } = await placeCall();
    conn.send({ type: 'SettingsApplied' });
    conn.send({ type: 'Error', code: 'INVALID_SETTINGS', description: 'settings rejected' });
    await conn.closed;
    const closed = await carrier.closed;
    expect(closed.code).toBe(1000);
    // The fallback phrase played before the hang-up, and a mark followed it.
    expect(carrier.audio().length).toBeGreaterThan(8000);
    const lastAudio = carrier.received.map((m) => m.event).lastIndexOf('media');
    expect(carrier.received.slice(lastAudio).some((m) => m.event === 'mark')).toBe(true);
    expect(await metricValue('callbridge_calls_total', 'reason="agent_error"')).toBe(1);
    expect(await metricValue('callbridge_calls_active')).toBe(0);
  });

  it('ends the call when the agent refuses the handshake', async () => {
    agent.refuseWith(429);
    const callSid = newCallSid();
    const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+1', To: '+2' });
    const carrier = await openMediaStream(answer.streamUrl, { callSid });
    carrier.start(answer.parameters);
    await carrier.closed;
    expect(await metricValue('callbridge_calls_total', 'reason="agent_refused"')).toBe(1);
    // Retried within a short budget before giving up, and every refusal counted.
    expect(await metricValue('callbridge_agent_refused_total')).toBeGreaterThan(1);
    expect(carrier.audio().length).toBeGreaterThan(8000); // the fallback message
  });
});

describe('agent connect timeout', () => {
  it('ends the call when the agent host accepts TCP but never answers the handshake', async () => {
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    await server.close();
    server = await startServer({
      AGENT_URL: `ws://127.0.0.1:${port}`,
      AGENT_API_KEY: API_KEY,
      AGENT_CONNECT_TIMEOUT_MS: '200',
    });
    try {
      const callSid = newCallSid();
      const answer = await voiceWebhook(server.baseUrl, { CallSid: callSid, From: '+1', To: '+2' });
      const carrier = await openMediaStream(answer.streamUrl, { callSid });
      carrier.start(answer.parameters);
      expect((await carrier.closed).code).toBe(1000);
      expect(await metricValue('callbridge_calls_total', 'reason="agent_unreachable"')).toBe(1);
      // Once, when the stream arrived: an unsigned voice webhook pre-warms nothing (src/call/intake/trust.ts).
      expect(await metricValue('callbridge_agent_errors_total', 'code="CALLBRIDGE_AGENT_TIMEOUT"')).toBe(1);
      expect(await metricValue('callbridge_prewarm_sessions_total', 'outcome="failed"')).toBe(0);
    } finally {
      silent.close();
    }
  });
});

describe('stream admission', () => {
  async function refused(parameters: Record<string, string>, callSid = newCallSid()) {
    const carrier = await openMediaStream(`${server.baseUrl.replace('http', 'ws')}/media/twilio`, {
      callSid,
    });
    carrier.start(parameters);
    return carrier.closed;
  }

  it('closes a stream with no token with a policy violation and opens no agent session', async () => {
    const closed = await refused({});
    expect(closed.code).toBe(1008);
    expect(agent.connections).toHaveLength(0);
    expect(await metricValue('callbridge_streams_rejected_total', 'reason="token_missing"')).toBe(1);
  });

  it('refuses a forged token', async () => {
    const closed = await refused({ token: 'v1.eyJjIjoiQ0EifQ.forged' });
    expect(closed.code).toBe(1008);
    expect(agent.connections).toHaveLength(0);
  });

  it('refuses a token issued for another call', async () => {
    const answer = await voiceWebhook(server.baseUrl, { CallSid: newCallSid(), From: '+1', To: '+2' });
    const closed = await refused(answer.parameters, newCallSid());
    expect(closed.code).toBe(1008);
    expect(await metricValue('callbridge_streams_rejected_total', 'reason="token_wrong_call"')).toBe(1);
  });

  it('refuses a replayed token', async () => {
    const { callSid, answer, conn } = await placeCall();
    const closed = await refused(answer.parameters, callSid);
    expect(closed.code).toBe(1008);
    expect(agent.connections).toEqual([conn]);
    expect(await metricValue('callbridge_streams_rejected_total', 'reason="token_replayed"')).toBe(1);
  });
});

describe('service routes', () => {
  it('serves info, liveness, readiness and the contract metrics', async () => {
    const info = (await (await fetch(`${server.baseUrl}/`)).json()) as { webhooks: { endpoint: string } };
    expect(info.webhooks.endpoint).toBe('/webhooks/:provider');
    expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    server.app.callbridge.draining = true;
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(503);
    const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
    for (const name of [
      'callbridge_calls_active',
      'callbridge_calls_total',
      'callbridge_barge_ins_total',
      'callbridge_agent_connect_duration_seconds',
      'callbridge_webhook_requests_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
  });

  it('answers unknown routes with the contract error shape', async () => {
    const res = await fetch(`${server.baseUrl}/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_NOT_FOUND');
  });
});
