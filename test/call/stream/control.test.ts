// Call control over real sockets: a fake agent scripted here, a `ws` client playing Twilio, and a
// fake Twilio REST API (TWILIO_API_URL) that records hang-ups and transfers.
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeConfigDir } from '../../helpers/config-dir.js';
import { type AgentConnection, type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import {
  type FakeApiRequest,
  type FakeCarrierApi,
  startFakeCarrierApi,
} from '../../helpers/fake-carrier-api.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import {
  type CarrierStreamClient,
  localStreamUrl,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../../helpers/twilio-carrier.js';

const AUTH_TOKEN = 'control-test-auth-token-000000001';
const ACCOUNT_SID = `AC${'c'.repeat(32)}`;
const FUNCTION_SECRET = 'function-secret-for-tests';

let agent: FakeAgent;
let api: FakeCarrierApi;
/** A call update's form parameters, as Twilio reads them. */
const form = (request: FakeApiRequest) => Object.fromEntries(new URLSearchParams(request.body));
let server: TestServer;
let hook: Server | null = null;
let hookUrl = '';
const hookRequests: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];
let hookDelayMs = 0;

const baseProfile = {
  prompt: 'You are a test agent.',
  greeting: 'Hello from the test.',
  think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
  endCall: true,
  transfer: { allow: ['+15550199', 'sip:desk@pbx.example.com'] },
  dtmf: { enabled: true, interDigitTimeoutMs: 5000, terminator: '#', maxDigits: 12 },
  limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 0 },
};

async function start(profileOverrides: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const configDir = writeConfigDir({
    default: {
      ...baseProfile,
      functions: [
        {
          name: 'lookup_order',
          description: 'Look up an order.',
          parameters: { type: 'object', properties: { order: { type: 'string' } } },
          url: hookUrl,
          secret: FUNCTION_SECRET,
          timeoutMs: 300,
        },
      ],
      ...profileOverrides,
    },
  });
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'key',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_URL: api.url,
    PUBLIC_URL: 'https://voice.example.com',
    CONFIG_DIR: configDir,
    ...env,
  });
}

beforeEach(async () => {
  agent = await startFakeAgent();
  api = await startFakeCarrierApi(() => ({ status: 200, body: { sid: 'CA0', status: 'in-progress' } }));
  hookRequests.length = 0;
  hookDelayMs = 0;
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      hookRequests.push({ headers: req.headers, body });
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'shipped' }));
      }, hookDelayMs);
    });
  });
  await new Promise<void>((resolve) => hook!.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(hook.address() as { port: number }).port}/lookup`;
});

afterEach(async () => {
  await server?.close();
  await agent.close();
  await api.close();
  hook?.closeAllConnections();
  await new Promise<void>((resolve) => hook?.close(() => resolve()));
});

async function placeCall(opts: { echoMarks?: boolean } = {}) {
  const callSid = newCallSid();
  const params = { CallSid: callSid, AccountSid: ACCOUNT_SID, From: '+15005550006', To: '+15005550001' };
  const answer = await voiceWebhook(server.baseUrl, params, {
    authToken: AUTH_TOKEN,
    publicUrl: 'https://voice.example.com',
  });
  expect(answer.status).toBe(200);
  const carrier = await openMediaStream(localStreamUrl(server.baseUrl, answer.streamUrl), {
    callSid,
    headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, answer.streamUrl, {}) },
    echoMarks: opts.echoMarks,
  });
  carrier.start(answer.parameters);
  const conn = await agent.nextConnection();
  await conn.waitFor('Settings');
  conn.send({ type: 'SettingsApplied' });
  return { callSid, carrier, conn };
}

function requestFunction(conn: AgentConnection, name: string, args: Record<string, unknown>, id = 'fc_1') {
  conn.send({
    type: 'FunctionCallRequest',
    functions: [{ id, name, arguments: JSON.stringify(args), client_side: true }],
  });
}

async function functionResponse(conn: AgentConnection, id: string) {
  await conn.waitFor('FunctionCallResponse');
  const response = conn.messages.find((m) => m.type === 'FunctionCallResponse' && m.id === id)!;
  return { ...response, parsed: JSON.parse(String(response.content)) as Record<string, unknown> };
}

function speak(conn: AgentConnection, bytes: number, text?: string): Buffer {
  conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
  if (text) conn.send({ type: 'ConversationText', role: 'assistant', content: text });
  const audio = randomBytes(bytes);
  conn.sendAudio(audio);
  conn.send({ type: 'AgentAudioDone' });
  return audio;
}

function marksSent(carrier: CarrierStreamClient): string[] {
  return carrier.received.filter((m) => m.event === 'mark').map((m) => (m.mark as { name: string }).name);
}

function echo(carrier: CarrierStreamClient, name: string) {
  carrier.sendRaw(
    JSON.stringify({ event: 'mark', streamSid: carrier.streamSid, sequenceNumber: '99', mark: { name } }),
  );
}

describe('end_call', () => {
  it('hangs up through the carrier API only after the goodbye mark is echoed', async () => {
    await start();
    const { callSid, carrier, conn } = await placeCall({ echoMarks: false });
    requestFunction(conn, 'end_call', {});
    const response = await functionResponse(conn, 'fc_1');
    expect(response.parsed.ok).toBe(true);
    const goodbye = speak(conn, 4000, 'Goodbye!');
    await carrier.waitForAudio(goodbye.length);
    await carrier.waitFor((m) => m.event === 'mark');
    // Audio and marks are out, but nothing confirmed them played: no hang-up yet.
    await new Promise((r) => setTimeout(r, 300));
    expect(api.requests).toHaveLength(0);
    for (const name of marksSent(carrier)) echo(carrier, name);
    const hangup = await api.waitFor((r) => form(r).Status === 'completed');
    expect(hangup.path).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${callSid}.json`);
    expect(hangup.authorization).toBe(
      `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    );
    await carrier.closed;
    const record = await server.store.getCallRecord(callSid);
    expect(record?.endReason).toBe('end_call');
    expect(record?.functionCalls).toEqual([expect.objectContaining({ name: 'end_call', outcome: 'ok' })]);
  });
});

describe('transfer_call', () => {
  it('refuses a target that is not on the allow-list, so the agent can tell the caller', async () => {
    await start();
    const { conn } = await placeCall();
    requestFunction(conn, 'transfer_call', { target: '+19005550000' });
    const response = await functionResponse(conn, 'fc_1');
    expect(String(response.parsed.error)).toContain('not allowed');
    expect(api.requests).toHaveLength(0);
  });

  it('dials a listed target through the carrier API once the agent has finished speaking', async () => {
    await start();
    const { callSid, carrier, conn } = await placeCall();
    requestFunction(conn, 'transfer_call', { target: 'sip:desk@pbx.example.com' });
    expect((await functionResponse(conn, 'fc_1')).parsed.ok).toBe(true);
    speak(conn, 1600, 'Connecting you now.');
    const update = await api.waitFor((r) => 'Twiml' in form(r));
    expect(update.path).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/${callSid}.json`);
    expect(form(update).Twiml).toContain('<Dial><Sip>sip:desk@pbx.example.com</Sip></Dial>');
    await carrier.closed;
    expect((await server.store.getCallRecord(callSid))?.endReason).toBe('transferred');
  });
});

describe('operator transfers and the dial policy', () => {
  const ADMIN = 'admin-token-for-control-tests';
  const transfer = (callSid: string, to: string) =>
    fetch(`${server.baseUrl}/v1/calls/${callSid}/transfer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ to }),
    });

  it('refuses a transfer of a live call to a premium-rate number: nothing reaches the carrier API', async () => {
    // Invariant: a transfer target the dial policy refuses is never sent to the carrier.
    await start({}, { ADMIN_TOKEN: ADMIN });
    const { callSid } = await placeCall();
    const refused = await transfer(callSid, '+19002345678');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'CALLBRIDGE_DIAL_BLOCKED',
    );
    expect(api.requests.filter((r) => 'Twiml' in form(r))).toEqual([]);

    const sent = await transfer(callSid, '+442071234567');
    expect(sent.status).toBe(200);
    const update = await api.waitFor((r) => 'Twiml' in form(r));
    expect(form(update).Twiml).toContain('+442071234567');
  });
});

describe('in-call transfers and the dial policy', () => {
  it('never sends a transfer the policy refuses, even to a target the profile lists: the call goes back to the agent', async () => {
    // Invariant: whatever asks for a transfer (agent function, fallback, operator), the leg refuses a
    // number the dial policy refuses. The process refuses such a profile at start; this is the backstop.
    await start({ transfer: { allow: ['+19002345678'] } });
    const { conn } = await placeCall();
    requestFunction(conn, 'transfer_call', { target: '+19002345678' });
    expect((await functionResponse(conn, 'fc_1')).parsed.ok).toBe(true);
    speak(conn, 1600, 'Connecting you now.');
    const injected = await conn.waitFor('InjectAgentMessage');
    expect(String(injected.message)).toMatch(/couldn't transfer you/);
    expect(api.requests.filter((r) => 'Twiml' in form(r))).toEqual([]);
  });
});

describe('HTTP functions', () => {
  it('posts a signed request the receiver can verify, and answers the agent with its reply', async () => {
    await start();
    const { callSid, conn } = await placeCall();
    requestFunction(conn, 'lookup_order', { order: 'W-1' });
    const response = await functionResponse(conn, 'fc_1');
    expect(response.parsed).toEqual({ status: 'shipped' });
    const [request] = hookRequests;
    const body = JSON.parse(request!.body);
    expect(body).toEqual({
      call: { callSid, from: '+15005550006', to: '+15005550001', profile: 'default' },
      name: 'lookup_order',
      arguments: { order: 'W-1' },
    });
    // Verified on the receiving side with node:crypto, independently of the project's code.
    const timestamp = String(request!.headers['x-callbridge-timestamp']);
    const expected = createHmac('sha256', FUNCTION_SECRET)
      .update(`${timestamp}.${request!.body}`)
      .digest('hex');
    expect(request!.headers['x-callbridge-signature']).toBe(`sha256=${expected}`);
  });

  it('answers the agent with an error it can recover from when the function times out', async () => {
    hookDelayMs = 2000;
    await start();
    const { conn } = await placeCall();
    requestFunction(conn, 'lookup_order', { order: 'W-2' }, 'fc_9');
    const response = await functionResponse(conn, 'fc_9');
    expect(String(response.parsed.error)).toMatch(/timed out/);
    expect((response as Record<string, unknown>).name).toBe('lookup_order');
  });

  it('answers every client-side entry of a request by id', async () => {
    await start();
    const { conn } = await placeCall();
    conn.send({
      type: 'FunctionCallRequest',
      functions: [
        { id: 'a', name: 'lookup_order', arguments: '{}', client_side: true },
        { id: 'b', name: 'no_such_function', arguments: '{}', client_side: true },
        { id: 'c', name: 'server_side', arguments: '{}', client_side: false },
      ],
    });
    await new Promise((r) => setTimeout(r, 300));
    const ids = conn.messages.filter((m) => m.type === 'FunctionCallResponse').map((m) => m.id);
    expect(ids.sort()).toEqual(['a', 'b']);
  });
});

describe('DTMF', () => {
  it('passes the digits of one entry to the agent as one message', async () => {
    await start();
    const { carrier, conn } = await placeCall();
    for (const digit of ['1', '2', '3', '4', '#']) carrier.dtmf(digit);
    const injected = await conn.waitFor('InjectUserMessage');
    expect(injected.content).toBe('The caller entered 1 2 3 4');
    expect(conn.messages.filter((m) => m.type === 'InjectUserMessage')).toHaveLength(1);
  });

  it('ignores keys when the profile says so', async () => {
    await start({ dtmf: { enabled: false } });
    const { carrier, conn } = await placeCall();
    for (const digit of ['1', '#']) carrier.dtmf(digit);
    await new Promise((r) => setTimeout(r, 200));
    expect(conn.messages.some((m) => m.type === 'InjectUserMessage')).toBe(false);
  });
});

describe('heard audio', () => {
  it('records a barged-in reply as interrupted, with the part the caller heard', async () => {
    await start();
    const { callSid, carrier, conn } = await placeCall({ echoMarks: false });
    const text = 'one two three four five six seven eight nine ten';
    conn.send({ type: 'AgentStartedSpeaking', total_latency: 0.4, tts_latency: 0.1, ttt_latency: 0.3 });
    conn.send({ type: 'ConversationText', role: 'assistant', content: text });
    // Two seconds of reply, in the 100 ms chunks an agent streams.
    for (let i = 0; i < 20; i++) conn.sendAudio(randomBytes(800));
    await carrier.waitForAudio(16_000);
    await carrier.waitFor((m) => m.event === 'mark');
    // The caller heard the first mark's worth, then interrupted.
    const [first] = marksSent(carrier);
    echo(carrier, first!);
    await new Promise((r) => setTimeout(r, 100));
    conn.send({ type: 'UserStartedSpeaking' });
    await carrier.waitFor((m) => m.event === 'clear');
    for (const name of marksSent(carrier).slice(1)) echo(carrier, name); // flushed by the clear: not heard
    carrier.stop();
    await carrier.closed;
    await new Promise((r) => setTimeout(r, 100));
    const record = await server.store.getCallRecord(callSid);
    const turn = record!.turns.find((t) => t.role === 'assistant')!;
    expect(turn.interrupted).toBe(true);
    expect(turn.generated).toBe(text);
    expect(turn.heardMs).toBeGreaterThan(0);
    expect(turn.heardMs).toBeLessThan(2000);
    expect(text.startsWith(turn.content)).toBe(true);
    expect(turn.content.length).toBeLessThan(text.length);
    expect(record!.bargeIns).toBe(1);
  });
});

describe('pre-warmed agent', () => {
  it('is dialed at the voice webhook and handed to the media stream', async () => {
    await start();
    const callSid = newCallSid();
    const params = { CallSid: callSid, AccountSid: ACCOUNT_SID, From: '+15005550006', To: '+15005550001' };
    const answer = await voiceWebhook(server.baseUrl, params, {
      authToken: AUTH_TOKEN,
      publicUrl: 'https://voice.example.com',
    });
    // The agent is already configuring before the carrier opens the stream.
    const conn = await agent.nextConnection();
    const settings = await conn.waitFor('Settings');
    expect(settings.tags).toContain(`call:${callSid}`);
    conn.send({ type: 'SettingsApplied' });
    const greeting = speak(conn, 800, 'Hello from the test.');
    const carrier = await openMediaStream(localStreamUrl(server.baseUrl, answer.streamUrl), {
      callSid,
      headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, answer.streamUrl, {}) },
    });
    carrier.start(answer.parameters);
    // The greeting spoken before the stream existed reaches the caller at once, and no second agent is dialed.
    expect((await carrier.waitForAudio(greeting.length)).equals(greeting)).toBe(true);
    const audio = randomBytes(320);
    carrier.media(audio);
    expect((await conn.waitForAudio(320)).equals(audio)).toBe(true);
    expect(agent.connections).toHaveLength(1);
    carrier.stop();
    await carrier.closed;
    expect((await server.store.getCallRecord(callSid))?.prewarmed).toBe(true);
  });

  it('is closed when its media stream never comes', async () => {
    await start({}, { AGENT_PREWARM_TTL_MS: '200' });
    const params = { CallSid: newCallSid(), AccountSid: ACCOUNT_SID, From: '+1555', To: '+1556' };
    await voiceWebhook(server.baseUrl, params, {
      authToken: AUTH_TOKEN,
      publicUrl: 'https://voice.example.com',
    });
    const conn = await agent.nextConnection();
    await conn.closed;
    expect(server.app.callbridge.prewarm.size).toBe(0);
  });
});

describe('silence and duration limits', () => {
  it('prompts the agent after a silence, and ends the call politely after a longer one', async () => {
    await start({ limits: { silencePromptMs: 200, silenceHangupMs: 600, maxCallMs: 0 } });
    const { callSid, carrier, conn } = await placeCall();
    const prompt = await conn.waitFor('InjectAgentMessage');
    expect(prompt.message).toBe('Are you still there?');
    await conn.waitFor('InjectAgentMessage');
    await new Promise<void>((resolve) => {
      const check = () => {
        const farewells = conn.messages.filter((m) => m.type === 'InjectAgentMessage');
        if (farewells.length >= 2) resolve();
        else setTimeout(check, 20);
      };
      check();
    });
    // The agent says its goodbye; the call ends once it has been heard.
    speak(conn, 800, 'Goodbye.');
    await api.waitFor((r) => form(r).Status === 'completed');
    await carrier.closed;
    expect((await server.store.getCallRecord(callSid))?.endReason).toBe('silence_timeout');
  });

  it('ends the call politely at the maximum duration', async () => {
    await start({ limits: { silencePromptMs: 0, silenceHangupMs: 0, maxCallMs: 300 } });
    const { callSid, carrier, conn } = await placeCall();
    const farewell = await conn.waitFor('InjectAgentMessage');
    expect(String(farewell.message)).toMatch(/time limit/);
    speak(conn, 800, 'Goodbye.');
    await carrier.closed;
    expect((await server.store.getCallRecord(callSid))?.endReason).toBe('max_duration');
  });
});
