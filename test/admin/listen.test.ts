// Listen-in hears the right call: its left channel is exactly the audio the carrier sent for that
// call (decoded), not another call's; it ends with the call, needs the operator role, and is audited.
import { decodeMulaw } from '../../src/audio/codec.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { CarrierStreamClient } from '../helpers/twilio-carrier.js';
import { ADMIN_TOKEN, call, createKey } from './access-helpers.js';
import { liveTwilioCall } from '../helpers/live-call.js';

let agent: FakeAgent;
let server: TestServer;
const streams: CarrierStreamClient[] = [];
const sockets: WebSocket[] = [];

beforeEach(async () => {
  agent = await startFakeAgent({ autoApply: true });
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'k', ADMIN_TOKEN });
});
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await server.close();
  await agent.close();
});

interface Listener {
  texts: Record<string, unknown>[];
  audio: Buffer[];
  closed: Promise<number>;
}

function listen(callSid: string, key: string): Promise<Listener> {
  const url = `${server.baseUrl.replace('http', 'ws')}/v1/calls/${callSid}/listen`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  sockets.push(socket);
  const listener: Listener = {
    texts: [],
    audio: [],
    closed: new Promise((resolve) => socket.on('close', (code) => resolve(code))),
  };
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) listener.audio.push(Buffer.from(data));
    else listener.texts.push(JSON.parse(data.toString('utf8')) as Record<string, unknown>);
  });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(listener));
    socket.once('unexpected-response', (_req, res) => reject(new Error(`status ${res.statusCode}`)));
    socket.once('error', reject);
  });
}

/** 20 ms of μ-law at 8 kHz whose bytes say which call and frame they are. */
function frame(seed: number): Buffer {
  return Buffer.from(Array.from({ length: 160 }, (_, i) => (seed * 31 + i * 7) % 256));
}

function leftChannel(chunks: Buffer[]): Int16Array {
  const all = Buffer.concat(chunks);
  const left = new Int16Array(all.length / 4);
  for (let i = 0; i < left.length; i++) left[i] = all.readInt16LE(i * 4);
  return left;
}

describe('GET /v1/calls/:callSid/listen', () => {
  it("streams the call's caller audio as the left channel of stereo PCM16, and ends with the call", async () => {
    const target = await liveTwilioCall(server);
    const other = await liveTwilioCall(server);
    streams.push(target.stream, other.stream);
    const operator = await createKey(server, 'operator', 'supervisor');
    const listener = await listen(target.callSid, operator);
    await expect
      .poll(() => listener.texts[0])
      .toEqual({
        type: 'format',
        sampleRate: 8000,
        channels: 2,
        encoding: 'pcm_s16le',
      });

    const sent = [1, 2, 3, 4, 5].map(frame);
    for (const [i, payload] of sent.entries()) {
      target.stream.media(payload);
      other.stream.media(frame(100 + i));
    }
    const expected = decodeMulaw(Buffer.concat(sent));
    await expect.poll(() => leftChannel(listener.audio).length).toBe(expected.length);
    expect([...leftChannel(listener.audio)]).toEqual([...expected]);

    expect(
      (await call(server, 'POST', `/v1/calls/${target.callSid}/hangup`, { bearer: operator })).status,
    ).toBe(200);
    expect(await listener.closed).toBe(1000);
    expect(listener.texts.at(-1)).toEqual({ type: 'end' });
    const audit = await call(server, 'GET', '/v1/audit', { bearer: ADMIN_TOKEN });
    expect((audit.body.entries as { action: string; target: string; keyName: string }[])[1]).toMatchObject({
      action: 'call.listen',
      target: target.callSid,
      keyName: 'supervisor',
    });
  });

  it('refuses a viewer, a missing key and an unknown call before upgrading', async () => {
    const live = await liveTwilioCall(server);
    streams.push(live.stream);
    const viewer = await createKey(server, 'viewer');
    await expect(listen(live.callSid, viewer)).rejects.toThrow('status 403');
    await expect(listen(live.callSid, 'nope')).rejects.toThrow('status 401');
    await expect(listen('CA-not-live', ADMIN_TOKEN)).rejects.toThrow('status 404');
  });
});
