// A recorded call through the whole app over real sockets: a `ws` client plays Twilio, a fake agent
// speaks, recordings go to an S3-compatible server (s3rver) while the call runs. Afterwards the
// recording is served by the admin API with the caller's frames exactly on the left, the record
// carries it, and the operator gateway received `calls/call.ended` and `calls/recording.ready`,
// each signed like every event.
import { rmSync } from 'node:fs';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { writeConfigDir } from '../helpers/config-dir.js';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { type S3Server, startS3Server } from '../helpers/s3-server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { answeredCall } from '../helpers/twilio-carrier.js';
import { readStereoWav } from '../helpers/wav-stereo.js';
import {
  type FakeOperatorGateway,
  hmacOf,
  startFakeOperatorGateway,
  waitUntil,
} from '../webhooks/helpers.js';

const ADMIN_TOKEN = 'admin-token-for-recordings-01';
const SECRET = 'operator-secret-for-recordings';

let agent: FakeAgent;
let s3: S3Server;
let operator: FakeOperatorGateway;
let server: TestServer;
let configDir: string;

beforeEach(async () => {
  agent = await startFakeAgent();
  s3 = await startS3Server();
  operator = await startFakeOperatorGateway();
  configDir = writeConfigDir({
    support: {
      prompt: 'You answer the phone.',
      think: { provider: { type: 'open_ai', model: 'gpt-4o-mini' } },
      recording: { enabled: true, consent: null, retentionDays: 7 },
    },
  });
  const bucket = s3.config();
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'test-agent-key',
    ADMIN_TOKEN,
    CONFIG_DIR: configDir,
    OPERATOR_GATEWAY_URL: `${operator.url}/events`,
    OPERATOR_GATEWAY_SECRET: SECRET,
    RECORDING_STORE: 's3',
    S3_BUCKET: bucket.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
  });
});

afterEach(async () => {
  await server.close();
  await agent.close();
  await operator.close();
  await s3.close();
  rmSync(configDir, { recursive: true, force: true });
});

function verifySignature(headers: Record<string, unknown>, body: string): void {
  const header = String(headers['x-callbridge-signature']);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  expect(match, header).not.toBeNull();
  expect(match![2]).toBe(hmacOf('sha256', SECRET, `${match![1]}.${body}`).toString('hex'));
}

it('stores the call in the bucket while it runs, serves it, records it and announces it, signed', async () => {
  const { callSid, carrier, conn } = await answeredCall(server.baseUrl, agent);
  const frames = Array.from({ length: 50 }, (_, i) => Buffer.alloc(160, (i * 5) & 0x7f));
  for (const frame of frames) carrier.media(frame);
  await conn.waitForAudio(frames.length * 160);
  conn.send({ type: 'AgentStartedSpeaking' });
  conn.sendAudio(Buffer.alloc(1600, 0x10));
  await carrier.waitForAudio(1600);
  carrier.stop();
  await carrier.closed;

  await waitUntil(() => operator.requests.length >= 2, 15_000, 'the call events');
  const byEvent = new Map(operator.requests.map((r) => [r.json.name, r]));
  const ended = byEvent.get('calls/call.ended')!;
  const ready = byEvent.get('calls/recording.ready')!;
  for (const request of [ended, ready]) verifySignature(request.headers, request.body);
  expect(ended.json.payload).toEqual({
    callSid,
    direction: 'inbound',
    carrier: 'twilio',
    from: '+15005550006',
    to: '+15005550001',
    outcome: 'completed',
    reason: 'caller_hangup',
    durationMs: expect.any(Number),
  });
  const { durationMs, bytes } = ready.json.payload as { durationMs: number; bytes: number };
  expect(ready.json.payload).toEqual({ callSid, durationMs, bytes });
  expect(bytes).toBe(44 + Math.round((durationMs * 8000 * 4) / 1000));

  const res = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, connection: 'close' },
  });
  expect(res.status).toBe(200);
  const wav = readStereoWav(Buffer.from(await res.arrayBuffer()));
  expect(wav.declaredDataBytes).toBe(bytes - 44);
  // The frames were sent at once, so they lie back to back from their arrival (after any silence).
  const first = wav.left.findIndex((s) => s !== 0);
  expect(wav.left.subarray(0, first).every((s) => s === 0)).toBe(true);
  expect([...wav.left.subarray(first, first + 8000)]).toEqual([...decodeMulaw(Buffer.concat(frames))]);
  expect(wav.right.some((s) => s !== 0)).toBe(true);

  let record = await server.store.getCallRecord(callSid);
  for (let i = 0; i < 100 && !record?.recording; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    record = await server.store.getCallRecord(callSid);
  }
  expect(record?.recording).toEqual({ state: 'ready', durationMs, bytes, pauses: [] });
  const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
  expect(metrics).toMatch(/callbridge_recordings_total\{[^}]*store="s3"[^}]*outcome="ready"[^}]*\} 1/);
});

it('pauses and resumes a live call by the admin API, and lists the pause in the record', async () => {
  const { callSid, carrier } = await answeredCall(server.baseUrl, agent);
  const control = async (action: string) => {
    const res = await fetch(`${server.baseUrl}/v1/calls/${callSid}/recording/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  expect(await control('resume')).toMatchObject({ status: 409 });
  expect(await control('pause')).toEqual({
    status: 200,
    body: { callSid, instance: server.config.instanceId, recording: 'paused' },
  });
  const again = await control('pause');
  expect(again.status).toBe(409);
  expect((again.body.error as { message: string }).message).toBe("the call's recording is already paused");
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await control('resume')).toMatchObject({ status: 200, body: { recording: 'recording' } });
  carrier.stop();
  await carrier.closed;

  let record = await server.store.getCallRecord(callSid);
  for (let i = 0; i < 200 && !record?.recording; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    record = await server.store.getCallRecord(callSid);
  }
  expect(record?.recording?.pauses).toEqual([{ atMs: expect.any(Number), durationMs: expect.any(Number) }]);
  expect(record!.recording!.pauses[0]!.durationMs).toBeGreaterThanOrEqual(100);
});
