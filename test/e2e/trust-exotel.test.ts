// What an unauthenticated request may cause, through the real process (docs/security.md): an
// attacker's Exotel requests against a production server, then against a development one, each with
// the legitimate path beside it still working. Fakes of the agent and of Exotel's API record every
// connection and request, so "nothing happened" is counted, not waited for.
import twilio from 'twilio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import type { FakeCarrierApi } from '../helpers/fake-carrier-api.js';
import { startFakeExotelApi } from '../helpers/fake-exotel-api.js';
import {
  exotelTarget,
  newExotelSid,
  openExotelStream,
  postExotelStatus,
  requestExotelStream,
} from '../helpers/exotel-carrier.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';

const AUTH_TOKEN = 'twilio-auth-token-of-the-trust-test-0001';
const TWILIO = { TWILIO_ACCOUNT_SID: `AC${'3'.repeat(32)}`, TWILIO_AUTH_TOKEN: AUTH_TOKEN };
const EXOTEL_ACCOUNT = {
  EXOTEL_ACCOUNT_SID: 'acme1',
  EXOTEL_API_KEY: 'exotel-api-key',
  EXOTEL_API_TOKEN: 'exotel-api-token-secret-0001',
};

let agent: FakeAgent;
let exotelApi: FakeCarrierApi;

beforeAll(async () => {
  await ensureBuilt();
  agent = await startFakeAgent({ autoApply: true });
  exotelApi = await startFakeExotelApi();
}, 120_000);

afterAll(async () => {
  await disposeAll();
  await agent?.close();
  await exotelApi?.close();
});

/** A signed Twilio call carried to the agent: the legitimate path the attacks must leave working. */
async function signedTwilioCall(server: ServerProcess): Promise<{ observer: string | null }> {
  const callSid = newCallSid();
  const answer = await voiceWebhook(
    server.baseUrl,
    { CallSid: callSid, From: '+15550100', To: '+15550101' },
    { authToken: AUTH_TOKEN },
  );
  expect(answer.status).toBe(200);
  const carrier = await openMediaStream(answer.streamUrl, {
    callSid,
    headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, answer.streamUrl, {}) },
  });
  carrier.start(answer.parameters);
  const conn = await agent.nextConnection();
  expect((await conn.waitFor('Settings')).type).toBe('Settings');
  carrier.stop();
  await carrier.closed;
  return { observer: answer.observer };
}

describe('a production server with every carrier configured', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await spawnServer({
      NODE_ENV: 'production',
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'agent-key',
      MAX_CALLS: '20',
      ...TWILIO,
      ...EXOTEL_ACCOUNT,
      EXOTEL_API_URL: exotelApi.url,
      // Exotel's networks, which this test's loopback address is not part of.
      EXOTEL_ALLOWED_CIDRS: '203.0.113.0/24,2001:db8::/32',
    });
  }, 60_000);

  it("refuses Exotel's routes from outside its networks: no token, no agent, no slot, no API read", async () => {
    // Issue 19: 20 unauthenticated GETs held every admission slot, each pre-warmed an agent and
    // handed out an observer token valid for a signed Twilio call with the same sid.
    const twilioSid = newCallSid();
    const answers = [];
    for (let i = 0; i < 25; i++) {
      answers.push(
        await requestExotelStream(server.baseUrl, {
          CallSid: i === 0 ? twilioSid : newExotelSid(),
          CallTo: '08012345678',
        }),
      );
    }
    for (const answer of answers) {
      expect(answer.status).toBe(403);
      expect(answer.observer).toBeNull();
      expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_SIGNATURE');
    }
    const status = await postExotelStatus(server.baseUrl, {
      CallSid: newExotelSid(),
      Status: 'completed',
      CustomField: 'r1.forged.context',
    });
    expect(status.status).toBe(403);

    // The legitimate path: a signed Twilio call is admitted and carried, with its own observer token.
    const { observer } = await signedTwilioCall(server);
    expect(observer).toMatch(/^o1\.twilio\./);
    expect(agent.connections).toHaveLength(1);
    expect(exotelApi.requests).toEqual([]);
    const refusals = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(refusals).toMatch(
      /callbridge_carrier_requests_rejected_total\{[^}]*carrier="exotel"[^}]*reason="network"[^}]*\} 26/,
    );
    // Each refusal is one warn line, never an error with a stack.
    expect(server.errorLogs().count).toBe(0);
  });
});

describe('a production server without EXOTEL_ALLOWED_CIDRS', () => {
  it("refuses Exotel's routes until the networks are set, and says so at start", async () => {
    const server = await spawnServer({
      NODE_ENV: 'production',
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'agent-key',
      ...TWILIO,
    });
    const answer = await requestExotelStream(server.baseUrl, { CallSid: newExotelSid() });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toContain('EXOTEL_ALLOWED_CIDRS');
    expect(answer.observer).toBeNull();
    expect(server.output()).toContain('EXOTEL_ALLOWED_CIDRS is not set');
    await server.dispose();
  });
});

describe('a development server, Exotel unverified (no networks set)', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await spawnServer({
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'agent-key',
      ...EXOTEL_ACCOUNT,
      EXOTEL_API_URL: exotelApi.url,
      MAX_CALLS: '3',
    });
  }, 60_000);

  it("answers, but dials the agent only for a stream with the call's own credentials and token, once", async () => {
    const before = agent.connections.length;
    const callSid = newExotelSid();
    const answer = await requestExotelStream(server.baseUrl, { CallSid: callSid, CallTo: '08012345678' });
    expect(answer.status).toBe(200);
    // No observer token for an unverified request, and no agent pre-warmed for it.
    expect(answer.observer).toBeNull();
    const target = exotelTarget(answer.url!, server.baseUrl);

    // Another call's URL: its credentials open only its own stream.
    const other = exotelTarget(
      (await requestExotelStream(server.baseUrl, { CallSid: newExotelSid() })).url!,
      server.baseUrl,
    );
    for (const headers of [{}, other.headers]) {
      const refused = await openExotelStream({ ...target, headers }, { callSid }).then(
        (client) => client.closed,
        (err: Error) => ({ code: -1, reason: err.message }),
      );
      expect(refused.reason).toMatch(/401/);
    }
    expect(agent.connections).toHaveLength(before);

    // The URL as handed out: the agent is dialed now, and only now.
    const exotel = await openExotelStream(target, { callSid });
    exotel.connected();
    exotel.start();
    const conn = await agent.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    expect(agent.connections).toHaveLength(before + 1);

    // The same URL again (a leaked one, replayed): refused, no second agent.
    const replay = await openExotelStream(target, { callSid });
    replay.connected();
    replay.start();
    expect((await replay.closed).reason).toBe('token_replayed');
    exotel.stop();
    await exotel.closed;
    expect(agent.connections).toHaveLength(before + 1);
  });

  it('costs no Exotel API read for an unverified status callback, and reads no context', async () => {
    const callSid = newExotelSid();
    const plain = await postExotelStatus(server.baseUrl, { CallSid: callSid, Status: 'busy' });
    expect(plain.status).toBe(204);
    const claimed = await postExotelStatus(server.baseUrl, {
      CallSid: callSid,
      Status: 'completed',
      CustomField: 'r1.AAAAAAAAAAAAAAAAAAAAAA.BBBBBBBBBBBBBBBBBBBBBB',
    });
    expect(claimed.status).toBe(400);
    expect(exotelApi.requests).toEqual([]);
    // Declines and refusals are warnings, never errors with a stack.
    expect(server.errorLogs().count).toBe(0);
  });

  it('holds no admission slot for an unverified request: thirty of them leave room for calls', async () => {
    // Issue 19: each anonymous GET held a slot for 15 s, so 20 of them declined a signed call.
    const before = agent.connections.length;
    for (let i = 0; i < 30; i++) {
      const answer = await requestExotelStream(server.baseUrl, { CallSid: newExotelSid() });
      expect(answer.status).toBe(200);
    }
    // MAX_CALLS is 3, and a call is still taken and carried.
    const callSid = newExotelSid();
    const answer = await requestExotelStream(server.baseUrl, { CallSid: callSid });
    expect(answer.status).toBe(200);
    const exotel = await openExotelStream(exotelTarget(answer.url!, server.baseUrl), { callSid });
    exotel.connected();
    exotel.start();
    const conn = await agent.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    expect(agent.connections).toHaveLength(before + 1);
    exotel.stop();
    await exotel.closed;
  });
});
