// A Redis outage while calls are up, on the real process (`node dist/main.js`) and a redis-server
// of the test's own that it kills and restarts: live calls go on, audio both ways; new calls are
// declined politely (at the voice webhook, and at the stream for a webhook answered just before);
// the webhook gateway answers 503 so providers retry; once Redis is back, everything is taken again.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fallbackAudio } from '../../src/call/session/fallback-audio.js';
import { MULAW_8K } from '../../src/audio/format.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import {
  type CarrierStreamClient,
  newCallSid,
  openMediaStream,
  voiceWebhook,
} from '../helpers/twilio-carrier.js';
import { hmacOf } from '../webhooks/helpers.js';

if (!REDIS_SERVER) console.warn('skipping test/fleet/redis-outage.test.ts: redis-server not found');

const DEPLOY_SECRET = 'fleet-outage-deploy-secret';
const ADMIN_TOKEN = 'fleet-outage-admin-token-0123456789';
const FRAME_BYTES = 160;

let agent: FakeAgent | undefined;
let redis: RedisServer | undefined;
const streams: CarrierStreamClient[] = [];

beforeAll(ensureBuilt, 120_000);

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await disposeAll();
  await agent?.close();
  await redis?.stop();
});

async function deploy(server: ServerProcess): Promise<number> {
  const body = JSON.stringify({ id: `dep-${randomBytes(6).toString('hex')}`, type: 'deployment.succeeded' });
  const res = await fetch(`${server.baseUrl}/webhooks/deploy`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-deploy-signature': hmacOf('sha1', DEPLOY_SECRET, body).toString('hex'),
    },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/** Webhooks are signed: only a verified call pre-warms its agent (docs/security.md). */
const TWILIO_TOKEN = 'redis-outage-twilio-auth-token-0001';
const TWILIO = {
  TWILIO_ACCOUNT_SID: `AC${'e'.repeat(32)}`,
  TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
  TWILIO_API_URL: 'http://127.0.0.1:9',
};

const newCall = (server: ServerProcess, callSid = newCallSid()) =>
  voiceWebhook(
    server.baseUrl,
    { CallSid: callSid, From: '+15005550006', To: '+15005550001' },
    { authToken: TWILIO_TOKEN },
  );

async function stream(url: string, callSid: string, parameters: Record<string, string>) {
  const client = await openMediaStream(url, { callSid, authToken: TWILIO_TOKEN });
  streams.push(client);
  client.start(parameters);
  return client;
}

describe.skipIf(!REDIS_SERVER)('a Redis outage mid-call', () => {
  it('keeps live calls up, declines new calls politely and answers webhooks 503 until Redis is back', async () => {
    redis = await startRedisServer();
    agent = await startFakeAgent({ autoApply: true });
    const server = await spawnServer({
      ...TWILIO,
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'key',
      REDIS_URL: redis.url,
      ADMIN_TOKEN,
      WEBHOOK_SECRET_DEPLOY: DEPLOY_SECRET,
      INSTANCE_ID: 'outage-1',
      // Long, so only the decline can close an agent pre-warmed for a declined stream in time.
      AGENT_PREWARM_TTL_MS: '60000',
    });
    expect(await deploy(server)).toBe(200);

    // A live call, and a second call whose webhook is answered but whose stream comes later.
    const liveSid = newCallSid();
    const live = await newCall(server, liveSid);
    const conn = await agent.nextConnection();
    const caller = await stream(live.streamUrl, liveSid, live.parameters);
    await conn.waitFor('Settings');
    caller.media(randomBytes(FRAME_BYTES));
    await conn.waitForAudio(FRAME_BYTES);
    const lateSid = newCallSid();
    const late = await newCall(server, lateSid);
    expect(late.body).toContain('<Connect><Stream');
    // Its agent is pre-warmed before the outage begins.
    const lateAgent = await agent.nextConnection();
    await lateAgent.waitFor('Settings');

    await redis.kill();

    // New calls are told to call back, with no agent dialed for them.
    await expect
      .poll(async () => (await newCall(server)).body, { timeout: 10_000 })
      .toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    const connectionsBefore = agent.connections.length;
    expect((await newCall(server)).body).not.toContain('<Stream');
    // The stream of the webhook answered before the outage cannot claim its token: the caller hears
    // the decline message, then the line is closed.
    const lateStream = await stream(late.streamUrl, lateSid, late.parameters);
    expect(await lateStream.closed).toEqual({ code: 1000, reason: 'call ended' });
    const message = fallbackAudio(undefined, MULAW_8K)!;
    expect(lateStream.audio().subarray(0, message.length).equals(message)).toBe(true);
    expect(agent.connections.length).toBe(connectionsBefore);
    // The agent pre-warmed for it is let go at once.
    await Promise.race([
      lateAgent.closed,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error('the pre-warmed agent was kept')), 20_000),
      ),
    ]);
    // The gateway answers 503 so the provider retries; the live-call directory cannot be read.
    expect(await deploy(server)).toBe(503);
    const liveList = await fetch(`${server.baseUrl}/v1/calls?live=true`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(liveList.status).toBe(503);
    expect(((await liveList.json()) as { error: { code: string } }).error.code).toBe(
      'CALLBRIDGE_UNAVAILABLE',
    );

    // The live call goes on: audio both ways, byte for byte.
    const callerAudio = randomBytes(FRAME_BYTES * 5);
    for (let at = 0; at < callerAudio.length; at += FRAME_BYTES) {
      caller.media(callerAudio.subarray(at, at + FRAME_BYTES));
    }
    await conn.waitForAudio(FRAME_BYTES + callerAudio.length);
    expect(conn.audioBytes().subarray(FRAME_BYTES).equals(callerAudio)).toBe(true);
    const agentAudio = randomBytes(FRAME_BYTES * 4);
    conn.sendAudio(agentAudio);
    expect((await caller.waitForAudio(agentAudio.length)).equals(agentAudio)).toBe(true);
    expect(server.child.exitCode).toBeNull();

    await redis.restart();

    await expect.poll(async () => deploy(server), { timeout: 15_000 }).toBe(200);
    await expect
      .poll(async () => (await newCall(server)).body, { timeout: 15_000 })
      .toContain('<Connect><Stream');
    // The call that lived through the outage ends normally, and its record is kept.
    caller.stop();
    expect(await caller.closed).toEqual({ code: 1000, reason: 'stream stopped' });
    await expect
      .poll(async () => {
        const res = await fetch(`${server.baseUrl}/v1/calls/${liveSid}`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        return res.status === 200 ? ((await res.json()) as { endReason: string }).endReason : res.status;
      })
      .toBe('caller_hangup');
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /callbridge_calls_declined_total\{carrier="twilio",reason="store_unavailable"[^}]*\} [1-9]/,
    );
  }, 90_000);

  it('declines new calls while Redis holds its connections but answers nothing, and keeps the live one', async () => {
    redis = await startRedisServer();
    agent = await startFakeAgent({ autoApply: true });
    const server = await spawnServer({
      ...TWILIO,
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'key',
      REDIS_URL: redis.url,
      INSTANCE_ID: 'outage-2',
    });
    const liveSid = newCallSid();
    const live = await newCall(server, liveSid);
    const conn = await agent.nextConnection();
    const caller = await stream(live.streamUrl, liveSid, live.parameters);
    // Live once caller audio reaches the agent: the stream's token is claimed by then.
    const first = randomBytes(FRAME_BYTES);
    caller.media(first);
    await conn.waitForAudio(FRAME_BYTES);

    redis.freeze();
    // A frozen Redis is noticed by the next heartbeat that times out; from then on callers hear the decline.
    await expect
      .poll(async () => (await newCall(server)).body, { timeout: 15_000, interval: 500 })
      .toMatch(/<Say>[^<]+<\/Say><Hangup\/>/);
    const up = randomBytes(FRAME_BYTES * 3);
    for (let at = 0; at < up.length; at += FRAME_BYTES) caller.media(up.subarray(at, at + FRAME_BYTES));
    expect((await conn.waitForAudio(FRAME_BYTES + up.length)).equals(Buffer.concat([first, up]))).toBe(true);
    const down = randomBytes(FRAME_BYTES * 2);
    conn.sendAudio(down);
    expect((await caller.waitForAudio(down.length)).equals(down)).toBe(true);

    redis.thaw();
    await expect
      .poll(async () => (await newCall(server)).body, { timeout: 15_000, interval: 500 })
      .toContain('<Connect><Stream');
    expect(server.child.exitCode).toBeNull();
  }, 90_000);
});
