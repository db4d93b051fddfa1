// A console on one instance sees the calls of every instance sharing the store start and end, from
// one directory read per change on its own instance, however many consoles are open. Needs Redis.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type EventReader, readEvents } from '../helpers/sse.js';
import type { CarrierStreamClient } from '../helpers/twilio-carrier.js';
import WebSocket from 'ws';
import { decodeMulaw } from '../../src/audio/codec.js';
import { liveTwilioCall } from '../helpers/live-call.js';

const hasRedis = await redisAvailable();
if (!hasRedis) console.warn(`skipping test/fleet/live-events.test.ts: no Redis answers at ${REDIS_URL}`);

const ADMIN_TOKEN = 'fleet-live-events-admin-token-0123';
let agent: FakeAgent;
let prefix: string;
let a: TestServer;
let b: TestServer;
const streams: CarrierStreamClient[] = [];
const readers: EventReader[] = [];

const startInstance = (name: string) =>
  startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'key',
    ADMIN_TOKEN,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    INSTANCE_ID: name,
    STREAM_TOKEN_SECRET: 'fleet-live-events-stream-secret-0000',
  });

beforeEach(async () => {
  if (!hasRedis) return;
  prefix = `cbtest-live-${randomBytes(4).toString('hex')}:`;
  agent = await startFakeAgent({ autoApply: true });
  a = await startInstance('live-a');
  b = await startInstance('live-b');
});
afterEach(async () => {
  if (!hasRedis) return;
  for (const reader of readers.splice(0)) reader.close();
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await a?.close();
  await b?.close();
  await agent?.close();
  await deleteKeys(prefix);
});

describe.skipIf(!hasRedis)('live events across a fleet', () => {
  it("shows a console on one instance the other instance's calls as they start and end", async () => {
    const consoles = await Promise.all(
      [1, 2, 3].map(() =>
        readEvents(`${b.baseUrl}/v1/calls/live/events`, { authorization: `Bearer ${ADMIN_TOKEN}` }),
      ),
    );
    readers.push(...consoles);
    for (const reader of consoles) await expect.poll(() => reader.events[0]?.event).toBe('snapshot');

    const readsBefore = b.app.callbridge.fleet.live.reads;
    const live = await liveTwilioCall(a);
    streams.push(live.stream);
    for (const reader of consoles) {
      await expect
        .poll(() => reader.events.find((e) => e.event === 'started')?.data)
        .toMatchObject({ callSid: live.callSid, instance: 'live-a' });
    }
    const hangup = await fetch(`${b.baseUrl}/v1/calls/${live.callSid}/hangup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(hangup.status).toBe(200);
    for (const reader of consoles) {
      await expect
        .poll(() => reader.events.find((e) => e.event === 'ended')?.data)
        .toEqual({
          callSid: live.callSid,
        });
    }
    // Three consoles, one feed: the directory reads did not triple (a few per change and heartbeat).
    const reads = b.app.callbridge.fleet.live.reads - readsBefore;
    expect(reads).toBeGreaterThan(0);
    expect(b.app.callbridge.fleet.live.followers).toBe(3);
    expect(reads).toBeLessThan(20);
  });

  it('relays listen-in from the instance carrying the call to a console on the other', async () => {
    // The audio heard on b is the audio the carrier sent to a, byte for byte once decoded.
    const live = await liveTwilioCall(a);
    streams.push(live.stream);
    const socket = new WebSocket(`${b.baseUrl.replace('http', 'ws')}/v1/calls/${live.callSid}/listen`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const texts: Record<string, unknown>[] = [];
    const audio: Buffer[] = [];
    const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) audio.push(Buffer.from(data));
      else texts.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
    });
    await expect.poll(() => texts[0]).toMatchObject({ type: 'format', sampleRate: 8000, channels: 2 });
    const sent = [1, 2, 3].map((n) => Buffer.from(Array.from({ length: 160 }, (_, i) => (n * 37 + i) % 256)));
    for (const payload of sent) live.stream.media(payload);
    const expected = decodeMulaw(Buffer.concat(sent));
    const left = () => {
      const all = Buffer.concat(audio);
      return Array.from({ length: all.length / 4 }, (_, i) => all.readInt16LE(i * 4));
    };
    await expect.poll(() => left().length).toBe(expected.length);
    expect(left()).toEqual([...expected]);
    await fetch(`${b.baseUrl}/v1/calls/${live.callSid}/hangup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await closed).toBe(1000);
    expect(texts.at(-1)).toEqual({ type: 'end' });
  });
});
