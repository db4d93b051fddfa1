// Recordings in a fleet of two instances on one Redis and one S3-compatible bucket: a call carried
// by one instance is paused and resumed from the other (relayed like a hang-up), and once it ended
// its recording is served by the instance that did not carry it.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startTwilioCall } from '../helpers/live-call.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { type S3Server, startS3Server } from '../helpers/s3-server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { CarrierStreamClient } from '../helpers/twilio-carrier.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

const hasRedis = await redisAvailable();
const ADMIN_TOKEN = 'fleet-recording-admin-token-0123';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let agent: FakeAgent;
let s3: S3Server;
let configDir: string;
let prefix: string;
let a: TestServer;
let b: TestServer;
const streams: CarrierStreamClient[] = [];

async function startInstance(name: string): Promise<TestServer> {
  return startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'key',
    ADMIN_TOKEN,
    REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    INSTANCE_ID: name,
    STREAM_TOKEN_SECRET: 'fleet-recording-stream-token-secret-00',
    CONFIG_DIR: configDir,
    RECORDING_STORE: 's3',
    S3_BUCKET: s3.bucket,
    S3_PREFIX: `${prefix.replace(/:/g, '-')}recordings/`,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  });
}

beforeEach(async () => {
  if (!hasRedis) return;
  prefix = `cbtest-rec-${randomBytes(4).toString('hex')}:`;
  agent = await startFakeAgent({ autoApply: true });
  s3 = await startS3Server();
  configDir = writeConfigDir({
    support: {
      prompt: 'You answer the phone.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      recording: { enabled: true },
    },
  });
  a = await startInstance('rec-a');
  b = await startInstance('rec-b');
});

afterEach(async () => {
  if (!hasRedis) return;
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await a?.close();
  await b?.close();
  await agent?.close();
  await s3?.close();
  rmSync(configDir, { recursive: true, force: true });
  await deleteKeys(prefix);
});

describe.skipIf(!hasRedis)('recordings in a fleet', () => {
  it('pauses a call from the instance that does not carry it, and serves its recording there', async () => {
    const { callSid, stream } = await startTwilioCall(a.baseUrl);
    streams.push(stream);
    await expect.poll(() => a.app.callbridge.registry.has(callSid)).toBe(true);
    await expect
      .poll(async () => {
        const res = await fetch(`${b.baseUrl}/v1/calls?live=true`, { headers: admin });
        return ((await res.json()) as { calls: Array<{ callSid: string }> }).calls.map((c) => c.callSid);
      })
      .toEqual([callSid]);
    for (let i = 0; i < 25; i++) stream.media(Buffer.alloc(160, 0x20));

    const control = (action: string) =>
      fetch(`${b.baseUrl}/v1/calls/${callSid}/recording/${action}`, { method: 'POST', headers: admin });
    const paused = await control('pause');
    expect(paused.status).toBe(200);
    expect(await paused.json()).toEqual({ callSid, instance: 'rec-a', recording: 'paused' });
    expect((await control('resume')).status).toBe(200);
    stream.stop();
    await stream.closed;

    await expect.poll(async () => (await a.store.getCallRecord(callSid))?.recording?.state).toBe('ready');
    const record = await b.store.getCallRecord(callSid);
    expect(record?.recording?.pauses).toHaveLength(1);
    const res = await fetch(`${b.baseUrl}/v1/calls/${callSid}/recording`, {
      headers: { ...admin, connection: 'close' },
    });
    expect(res.status).toBe(200);
    const wav = readStereoWav(Buffer.from(await res.arrayBuffer()));
    expect(wav.left.length * 4 + 44).toBe(record?.recording?.bytes);
  });
});
