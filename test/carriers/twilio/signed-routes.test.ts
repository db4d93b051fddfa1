// With carrier credentials set, every Twilio webhook and media upgrade must carry a valid
// X-Twilio-Signature. Signatures here are made by the `twilio` package, independently of ours.
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeAgent, startFakeAgent } from '../../helpers/fake-agent.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { localStreamUrl, newCallSid, openMediaStream, voiceWebhook } from '../../helpers/twilio-carrier.js';

const AUTH_TOKEN = 'twilio-auth-token-for-tests-0001';
const ACCOUNT_SID = `AC${'a'.repeat(32)}`;
const PUBLIC_URL = 'https://bridge.example.com';

let agent: FakeAgent;
let server: TestServer;

beforeEach(async () => {
  agent = await startFakeAgent();
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'key',
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    // Behind a proxy the carrier signs the public URL, not the address the server listens on.
    PUBLIC_URL,
  });
});

afterEach(async () => {
  await server.close();
  await agent.close();
});

const params = () => ({
  CallSid: newCallSid(),
  AccountSid: ACCOUNT_SID,
  From: '+15005550006',
  To: '+15005550001',
});

describe('signed voice webhook', () => {
  it('accepts a request signed over the public URL', async () => {
    const answer = await voiceWebhook(server.baseUrl, params(), {
      authToken: AUTH_TOKEN,
      publicUrl: PUBLIC_URL,
    });
    expect(answer.status).toBe(200);
    expect(answer.streamUrl).toBe(
      `wss://bridge.example.com/media/twilio/${server.config.instanceId}/${answer.parameters.token}`,
    );
  });

  it('accepts the signature computed with the default port', async () => {
    const p = params();
    const signature = twilio.getExpectedTwilioSignature(
      AUTH_TOKEN,
      `${PUBLIC_URL}:443/carriers/twilio/voice`,
      p,
    );
    const answer = await voiceWebhook(server.baseUrl, p, { signature });
    expect(answer.status).toBe(200);
  });

  it('refuses an unsigned request with the contract error shape', async () => {
    const answer = await voiceWebhook(server.baseUrl, params());
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_SIGNATURE', message: expect.any(String) },
    });
  });

  it('refuses a signature made with another token, or over other params', async () => {
    const p = params();
    const wrongToken = twilio.getExpectedTwilioSignature(
      'another-token',
      `${PUBLIC_URL}/carriers/twilio/voice`,
      p,
    );
    expect((await voiceWebhook(server.baseUrl, p, { signature: wrongToken })).status).toBe(403);
    const signedOther = twilio.getExpectedTwilioSignature(AUTH_TOKEN, `${PUBLIC_URL}/carriers/twilio/voice`, {
      ...p,
      To: '+19999999999',
    });
    expect((await voiceWebhook(server.baseUrl, p, { signature: signedOther })).status).toBe(403);
  });

  it('checks status callbacks too', async () => {
    const p = { ...params(), CallStatus: 'completed' };
    const url = `${PUBLIC_URL}/carriers/twilio/status`;
    const post = (signature: string) =>
      fetch(`${server.baseUrl}/carriers/twilio/status`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
        body: new URLSearchParams(p).toString(),
      });
    expect((await post(twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, p))).status).toBe(204);
    expect((await post('bm9wZQ==')).status).toBe(403);
  });
});

describe('signed media upgrade', () => {
  const localMediaUrl = () => `${server.baseUrl.replace('http', 'ws')}/media/twilio`;

  it('refuses an upgrade without a signature before any agent is dialed', async () => {
    const ws = new WebSocket(localMediaUrl());
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
    });
    expect(status).toBe(403);
    expect(agent.connections).toHaveLength(0);
  });

  it('accepts an upgrade signed over the wss:// URL and bridges the call', async () => {
    const p = params();
    const answer = await voiceWebhook(server.baseUrl, p, { authToken: AUTH_TOKEN, publicUrl: PUBLIC_URL });
    const signature = twilio.getExpectedTwilioSignature(AUTH_TOKEN, answer.streamUrl, {});
    const carrier = await openMediaStream(localStreamUrl(server.baseUrl, answer.streamUrl), {
      callSid: p.CallSid,
      headers: { 'x-twilio-signature': signature },
    });
    carrier.start(answer.parameters);
    const conn = await agent.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    carrier.stop();
    await conn.closed;
  });

  it('refuses an upgrade signed over another path (the token is part of what is signed)', async () => {
    const p = params();
    const answer = await voiceWebhook(server.baseUrl, p, { authToken: AUTH_TOKEN, publicUrl: PUBLIC_URL });
    const signedElsewhere = twilio.getExpectedTwilioSignature(
      AUTH_TOKEN,
      `${PUBLIC_URL.replace('https', 'wss')}/media/twilio`,
      {},
    );
    const ws = new WebSocket(localStreamUrl(server.baseUrl, answer.streamUrl), {
      headers: { 'x-twilio-signature': signedElsewhere },
    });
    const status = await new Promise<number>((resolve) => {
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
    });
    expect(status).toBe(403);
    // The pre-warmed agent was dialed at the webhook; no stream session dialed another.
    expect(agent.connections.length).toBeLessThanOrEqual(1);
  });
});
