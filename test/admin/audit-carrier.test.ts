// The call controls that reach a carrier's API are audited too: placing a call (target: the new
// call) and transferring one (target: the call, detail: where to), under the operator's key.
import twilio from 'twilio';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeCarrierApi, type FakeCarrierApi } from '../helpers/fake-carrier-api.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  type CarrierStreamClient,
  localStreamUrl,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { ADMIN_TOKEN, call, createKey } from './access-helpers.js';

const AUTH_TOKEN = 'audit-test-twilio-auth-token-0001';
const ACCOUNT = `AC${'a'.repeat(32)}`;
let server: TestServer | undefined;
let api: FakeCarrierApi | undefined;
let agent: FakeAgent | undefined;
const streams: CarrierStreamClient[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await server?.close();
  await api?.close();
  await agent?.close();
});

async function start(callSid: string) {
  api = await startFakeCarrierApi(() => ({ status: 201, body: { sid: callSid, status: 'queued' } }));
  agent = await startFakeAgent({ autoApply: true });
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'k',
    ADMIN_TOKEN,
    TWILIO_ACCOUNT_SID: ACCOUNT,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_URL: api.url,
  });
  return server;
}

async function auditOf(s: TestServer, action: string) {
  const answer = await call(s, 'GET', '/v1/audit', { bearer: ADMIN_TOKEN });
  return (
    answer.body.entries as { action: string; target: string; keyName: string; detail?: unknown }[]
  ).filter((e) => e.action === action);
}

describe('audit of carrier controls', () => {
  it('records a placed call with the call it made', async () => {
    const callSid = newCallSid();
    const s = await start(callSid);
    const operator = await createKey(s, 'operator', 'outbound desk');
    const placed = await call(s, 'POST', '/v1/calls', { bearer: operator, body: { to: '+12125550100' } });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
    expect(await auditOf(s, 'call.place')).toEqual([
      expect.objectContaining({
        keyName: 'outbound desk',
        target: placed.body.callSid,
        detail: { to: '+12125550100', carrier: 'twilio' },
      }),
    ]);
  });

  it('records a transfer with its destination', async () => {
    const callSid = newCallSid();
    const s = await start(callSid);
    const answer = await voiceWebhook(
      s.baseUrl,
      { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
      {
        authToken: AUTH_TOKEN,
      },
    );
    const stream = await openMediaStream(localStreamUrl(s.baseUrl, answer.streamUrl), {
      callSid,
      headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, answer.streamUrl, {}) },
    });
    streams.push(stream);
    stream.start(answer.parameters);
    await expect.poll(() => s.app.callbridge.registry.has(callSid)).toBe(true);
    const operator = await createKey(s, 'operator', 'transfer desk');
    const moved = await call(s, 'POST', `/v1/calls/${callSid}/transfer`, {
      bearer: operator,
      body: { to: '+15550199' },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await auditOf(s, 'call.transfer')).toEqual([
      expect.objectContaining({
        keyName: 'transfer desk',
        target: callSid,
        detail: expect.objectContaining({ to: '+15550199' }),
      }),
    ]);
  });
});
