// Two instances sharing one Redis, each a real app on its own port: every live call is listed by
// either, a call is hung up and followed from the instance that does not carry it, and a stream
// that lands on the other instance gets the agent pre-warmed for it closed at once. Needs Redis;
// skipped, saying so, without it.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fleetKeys } from '../../src/fleet/keys.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { type FakeApiRequest, startFakeCarrierApi } from '../helpers/fake-carrier-api.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { liveTwilioCall } from '../helpers/live-call.js';
import { startServer, type TestServer } from '../helpers/server.js';
import {
  type CarrierStreamClient,
  localStreamUrl,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { readFeed } from './feed.js';

const hasRedis = await redisAvailable();
if (!hasRedis) console.warn(`skipping test/fleet/fleet.test.ts: no Redis answers at ${REDIS_URL}`);

const ADMIN_TOKEN = 'fleet-test-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let agent: FakeAgent;
let prefix: string;
let a: TestServer;
let b: TestServer;
const streams: CarrierStreamClient[] = [];

const FLEET_TWILIO_TOKEN = 'fleet-test-twilio-auth-token-00000';
const FLEET_TWILIO = {
  TWILIO_ACCOUNT_SID: `AC${'e'.repeat(32)}`,
  TWILIO_AUTH_TOKEN: FLEET_TWILIO_TOKEN,
  // Hang-ups reach no real API: a closed port answers at once.
  TWILIO_API_URL: 'http://127.0.0.1:9',
};

/**
 * Both instances again, with Twilio's requests signed: only a verified webhook pre-warms an agent
 * or gets an observer token (src/call/intake/trust.ts).
 */
async function restartSigned(): Promise<void> {
  await a.close();
  await b.close();
  a = await startInstance('fleet-a', { AGENT_PREWARM_TTL_MS: '60000', ...FLEET_TWILIO });
  b = await startInstance('fleet-b', FLEET_TWILIO);
}

async function startInstance(name: string, env: Record<string, string> = {}): Promise<TestServer> {
  return startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'key',
    ADMIN_TOKEN,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    INSTANCE_ID: name,
    // Both instances verify each other's stream tokens.
    STREAM_TOKEN_SECRET: 'fleet-test-stream-token-secret-000000',
    ...env,
  });
}

beforeEach(async () => {
  if (!hasRedis) return;
  prefix = `cbtest-fleet-${randomBytes(4).toString('hex')}:`;
  agent = await startFakeAgent({ autoApply: true });
  a = await startInstance('fleet-a', { AGENT_PREWARM_TTL_MS: '60000' });
  b = await startInstance('fleet-b');
});

afterEach(async () => {
  if (!hasRedis) return;
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await a?.close();
  await b?.close();
  await agent?.close();
  await deleteKeys(prefix);
});

/** A call answered by `answering` whose stream is opened on `carrying`; resolves once it is live. */
async function liveCall(
  answering: TestServer,
  carrying: TestServer = answering,
  authToken: string | undefined = undefined,
) {
  const callSid = newCallSid();
  const answer = await voiceWebhook(
    answering.baseUrl,
    { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
    authToken === undefined ? {} : { authToken },
  );
  expect(answer.streamUrl).toContain(`/media/twilio/${answering.config.instanceId}/`);
  const stream = await openMediaStream(localStreamUrl(carrying.baseUrl, answer.streamUrl), {
    callSid,
    ...(authToken === undefined ? {} : { authToken }),
  });
  streams.push(stream);
  stream.start(answer.parameters);
  await expect.poll(() => carrying.app.callbridge.registry.has(callSid)).toBe(true);
  return { callSid, stream, answer };
}

async function liveList(server: TestServer): Promise<Array<Record<string, unknown>>> {
  const res = await fetch(`${server.baseUrl}/v1/calls?live=true`, { headers: admin });
  expect(res.status).toBe(200);
  return ((await res.json()) as { calls: Array<Record<string, unknown>> }).calls;
}

const sids = (calls: Array<Record<string, unknown>>) => calls.map((call) => call.callSid).sort();

describe.skipIf(!hasRedis)('a fleet of two instances on one Redis', () => {
  it('lists every live call on either instance, with its instance and region, until it ends', async () => {
    const onA = await liveCall(a);
    const onB = await liveCall(b);
    const both = [onA.callSid, onB.callSid].sort();
    await expect.poll(async () => sids(await liveList(a))).toEqual(both);
    await expect.poll(async () => sids(await liveList(b))).toEqual(both);
    const listed = (await liveList(b)).find((call) => call.callSid === onA.callSid)!;
    expect(listed).toMatchObject({
      carrier: 'twilio',
      direction: 'inbound',
      from: '+15005550006',
      to: '+15005550001',
      instance: 'fleet-a',
      region: 'global',
      campaign: null,
    });
    expect(Date.parse(listed.startedAt as string)).not.toBeNaN();

    onA.stream.stop();
    await onA.stream.closed;
    await expect.poll(async () => sids(await liveList(b))).toEqual([onB.callSid]);
  });

  it('hangs up a call from the instance that does not carry it, relayed to the one that does', async () => {
    const call = await liveCall(a);
    await expect.poll(async () => sids(await liveList(b))).toEqual([call.callSid]);
    const res = await fetch(`${b.baseUrl}/v1/calls/${call.callSid}/hangup`, {
      method: 'POST',
      headers: admin,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ callSid: call.callSid, instance: 'fleet-a' });
    // No carrier API is configured: the call ends by closing its media stream.
    expect(await call.stream.closed).toEqual({ code: 1000, reason: 'call ended' });
    await expect
      .poll(async () => (await a.store.getCallRecord(call.callSid))?.endReason)
      .toBe('operator_hangup');
    expect((await a.store.getCallRecord(call.callSid))?.instance).toBe('fleet-a');
  });

  it('answers 404 for a call no instance carries, 409 when the carrying instance cannot transfer, 400 for a bad target', async () => {
    const call = await liveCall(a);
    await expect.poll(async () => sids(await liveList(b))).toEqual([call.callSid]);
    const post = (path: string, body?: unknown) =>
      fetch(`${b.baseUrl}/v1/calls/${path}`, {
        method: 'POST',
        headers: { ...admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const missing = await post(`${newCallSid()}/hangup`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_NOT_FOUND');
    const refused = await post(`${call.callSid}/transfer`, { to: '+15550199' });
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /call-control API/,
    );
    for (const body of [{}, { to: 'not a number' }, { to: 42 }, 'x']) {
      expect((await post(`${call.callSid}/transfer`, body)).status).toBe(400);
    }
    expect((await post('bad%20sid/hangup')).status).toBe(400);
    // The call went on through all of it.
    expect(a.app.callbridge.registry.has(call.callSid)).toBe(true);
  });

  it('streams a call carried by one instance to an observer connected to the other', async () => {
    await restartSigned();
    const callSid = newCallSid();
    const answer = await voiceWebhook(
      a.baseUrl,
      { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
      { authToken: FLEET_TWILIO_TOKEN },
    );
    const res = await fetch(`${b.baseUrl}/calls/${callSid}/events`, {
      headers: { authorization: `Bearer ${answer.observer}` },
    });
    expect(res.status).toBe(200);
    const feed = readFeed(res);
    const stream = await openMediaStream(localStreamUrl(a.baseUrl, answer.streamUrl), {
      callSid,
      authToken: FLEET_TWILIO_TOKEN,
    });
    streams.push(stream);
    stream.start(answer.parameters);
    const conn = await agent.nextConnection();
    conn.send({ type: 'ConversationText', role: 'user', content: 'I would like to book.' });
    conn.send({ type: 'ConversationText', role: 'assistant', content: 'Of course.' });
    await expect.poll(() => feed.events.length).toBeGreaterThanOrEqual(2);
    stream.stop();
    expect(await feed.done).toEqual([
      { type: 'transcript', role: 'user', content: 'I would like to book.' },
      { type: 'transcript', role: 'assistant', content: 'Of course.' },
      { type: 'end', reason: 'caller_hangup' },
    ]);
  });

  it('closes the agent pre-warmed on one instance at once when the stream lands on the other', async () => {
    // AGENT_PREWARM_TTL_MS is a minute on fleet-a: only the release can close its session in time.
    await restartSigned();
    const call = await liveCall(a, b, FLEET_TWILIO_TOKEN);
    const prewarmed = agent.connections[0]!;
    expect((await prewarmed.waitFor('Settings')).tags).toContain(`call:${call.callSid}`);
    await prewarmed.closed;
    expect(a.app.callbridge.prewarm.size).toBe(0);
    expect(a.app.callbridge.pending.size).toBe(0);
    const metrics = async (server: TestServer) => (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(await metrics(a)).toMatch(/callbridge_prewarm_sessions_total\{outcome="released"[^}]*\} 1/);
    expect(await metrics(b)).toMatch(
      /callbridge_stream_prewarm_total\{carrier="twilio",outcome="other_instance"[^}]*\} 1/,
    );
    // fleet-b carries the call with its own agent session.
    expect(agent.connections).toHaveLength(2);
    expect(b.app.callbridge.registry.has(call.callSid)).toBe(true);
  });

  it('transfers a call through the carrier API of the instance that carries it, asked on another', async () => {
    const callSid = newCallSid();
    const api = await startFakeCarrierApi(() => ({
      status: 200,
      body: { sid: callSid, status: 'in-progress' },
    }));
    /** A call update's form parameters, as Twilio reads them. */
    const form = (request: FakeApiRequest) => Object.fromEntries(new URLSearchParams(request.body));
    const authToken = 'fleet-test-twilio-auth-token-00001';
    const accountSid = `AC${'f'.repeat(32)}`;
    const c = await startInstance('fleet-c', {
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_API_URL: api.url,
    });
    try {
      const params = { CallSid: callSid, From: '+15005550006', To: '+15005550001' };
      const answer = await voiceWebhook(c.baseUrl, params, { authToken });
      // Twilio signs the media upgrade too, over the URL the answer named.
      const stream = await openMediaStream(localStreamUrl(c.baseUrl, answer.streamUrl), {
        callSid,
        headers: { 'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, answer.streamUrl, {}) },
      });
      streams.push(stream);
      stream.start(answer.parameters);
      await expect.poll(async () => sids(await liveList(b))).toEqual([callSid]);
      const res = await fetch(`${b.baseUrl}/v1/calls/${callSid}/transfer`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ to: '+15550199' }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ callSid, instance: 'fleet-c', to: '+15550199' });
      const update = await api.waitFor((r) => 'Twiml' in form(r));
      expect(update.path).toBe(`/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`);
      expect(form(update).Twiml).toContain('+15550199');
      await stream.closed;
      await expect.poll(async () => (await c.store.getCallRecord(callSid))?.endReason).toBe('transferred');
    } finally {
      await c.close();
      await api.close();
    }
  });

  it('drops malformed messages on its inbox and goes on relaying', async () => {
    const redis = new Redis(REDIS_URL);
    try {
      const inbox = fleetKeys(prefix).inbox('fleet-a');
      for (const junk of [
        '',
        'not json',
        '[]',
        '{"type":"hangup"}',
        '{"type":"reply","id":7}',
        'x'.repeat(10_000),
      ]) {
        expect(await redis.publish(inbox, junk)).toBe(1);
      }
    } finally {
      redis.disconnect();
    }
    const call = await liveCall(a);
    await expect.poll(async () => sids(await liveList(b))).toEqual([call.callSid]);
    const res = await fetch(`${b.baseUrl}/v1/calls/${call.callSid}/hangup`, {
      method: 'POST',
      headers: admin,
    });
    expect(res.status).toBe(200);
    await call.stream.closed;
  });
});

describe('one instance without Redis', () => {
  it('lists its own live calls and refuses a live flag it cannot read', async () => {
    const local = await startFakeAgent({ autoApply: true });
    const server = await startServer({
      AGENT_URL: local.url,
      AGENT_API_KEY: 'key',
      ADMIN_TOKEN,
      INSTANCE_ID: 'solo',
    });
    try {
      const { callSid, stream } = await liveTwilioCall(server);
      const calls = await liveList(server);
      expect(calls).toEqual([expect.objectContaining({ callSid, instance: 'solo' })]);
      const bad = await fetch(`${server.baseUrl}/v1/calls?live=maybe`, { headers: admin });
      expect(bad.status).toBe(400);
      stream.stop();
      await stream.closed;
      expect(await liveList(server)).toEqual([]);
    } finally {
      await server.close();
      await local.close();
    }
  });
});
