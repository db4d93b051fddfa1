// The recording routes over real HTTP on the app configured like production: a recording in the
// file store served as audio/wav whole and by single ranges (206, 416), with the header's sizes
// filled in; deletion (204, then 404, and the call record marked); pause and resume of a call that
// is not live; the admin bearer on every route.
import { get as httpGet } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { wavHeader } from '../../src/recording/wav-header.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { readStereoWav } from '../helpers/wav-stereo.js';

const ADMIN_TOKEN = 'admin-token-for-tests-0001';
const ENV = { AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'k', ADMIN_TOKEN };
const AUTH = { authorization: `Bearer ${ADMIN_TOKEN}` };

let server: TestServer;

beforeEach(async () => {
  server = await startServer(ENV);
});

afterEach(async () => {
  await server.close();
});

/** Stores a recording as a call cut short would leave it: the streaming header, then `data`. */
async function storeRecording(callSid: string, data: Buffer): Promise<void> {
  const upload = server.app.callbridge.recordings.store.begin(callSid, Date.now() + 60_000);
  upload.write(wavHeader(8000, null));
  upload.write(data);
  await upload.end();
}

function samples(bytes: number): Buffer {
  return Buffer.from(Array.from({ length: bytes }, (_, i) => (i * 7) & 0xff));
}

/**
 * A GET as curl makes it, one connection per request: a kept-alive connection whose streamed
 * response the client finished reading before the server saw it finish would hold `close` open.
 */
function get(path: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Headers; body: Buffer }>((resolve, reject) => {
    const req = httpGet(
      `${server.baseUrl}${path}`,
      { headers: { ...AUTH, ...headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers))
            if (typeof value === 'string') answer.set(name, value);
          resolve({ status: res.statusCode ?? 0, headers: answer, body: Buffer.concat(chunks) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
}

describe('GET /v1/calls/:callSid/recording', () => {
  it('serves the whole file as audio/wav, its header naming the sizes of whole frames', async () => {
    const data = samples(4001); // cut mid-frame: the last byte is not served
    await storeRecording('CA-rec-1', data);
    const res = await get('/v1/calls/CA-rec-1/recording');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/wav');
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect(res.headers.get('content-length')).toBe('4044');
    expect(res.body.length).toBe(4044);
    expect(res.body.subarray(44).equals(data.subarray(0, 4000))).toBe(true);
    const wav = readStereoWav(res.body);
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16, declaredDataBytes: 4000 });
    expect(res.body.readUInt32LE(4)).toBe(4036);
  });

  it('serves single ranges with 206, across the header and from the end', async () => {
    const data = samples(4000);
    await storeRecording('CA-rec-2', data);
    const whole = (await get('/v1/calls/CA-rec-2/recording')).body;
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      ['bytes=40-50', 40, 50],
      ['bytes=1000-', 1000, 4043],
      ['bytes=-10', 4034, 4043],
      ['bytes=4000-9999', 4000, 4043],
    ] as const) {
      const res = await get('/v1/calls/CA-rec-2/recording', { range });
      expect(res.status, range).toBe(206);
      expect(res.headers.get('content-range'), range).toBe(`bytes ${start}-${end}/4044`);
      expect(res.headers.get('content-length'), range).toBe(String(end - start + 1));
      expect(res.body.equals(whole.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers 416 to a range past the end, and the whole file to a header it does not take', async () => {
    await storeRecording('CA-rec-3', samples(400));
    const past = await get('/v1/calls/CA-rec-3/recording', { range: 'bytes=444-' });
    expect(past.status).toBe(416);
    expect(past.headers.get('content-range')).toBe('bytes */444');
    for (const range of ['bytes=0-1,5-6', 'items=0-1', 'bytes=x-y', 'bytes=9-2']) {
      const res = await get('/v1/calls/CA-rec-3/recording', { range });
      expect(res.status, range).toBe(200);
      expect(res.body.length, range).toBe(444);
    }
  });

  it('answers 404 when the call has no recording, 400 for what is not a call id, 401 without the bearer', async () => {
    const none = await get('/v1/calls/CA-none/recording');
    expect(none.status).toBe(404);
    expect(JSON.parse(none.body.toString()).error.code).toBe('CALLBRIDGE_NOT_FOUND');
    expect((await get('/v1/calls/a%2F..%2Fb/recording')).status).toBe(400);
    const res = await fetch(`${server.baseUrl}/v1/calls/CA-none/recording`);
    expect(res.status).toBe(401);
  });
});

describe('DELETE /v1/calls/:callSid/recording', () => {
  it('removes the recording (204), marks the record, then knows it no more (404)', async () => {
    await storeRecording('CA-del', samples(400));
    const record = callRecordFixture('CA-del', {
      recording: { state: 'ready', durationMs: 12, bytes: 444, pauses: [] },
    });
    await server.store.saveCallRecord(record);
    const del = () =>
      fetch(`${server.baseUrl}/v1/calls/CA-del/recording`, { method: 'DELETE', headers: AUTH });
    expect((await del()).status).toBe(204);
    expect((await get('/v1/calls/CA-del/recording')).status).toBe(404);
    expect((await del()).status).toBe(404);
    expect((await server.store.getCallRecord('CA-del'))?.recording?.state).toBe('deleted');
  });
});

describe('POST /v1/calls/:callSid/recording/pause and /resume', () => {
  it('answers 404 for a call that is not live anywhere', async () => {
    for (const action of ['pause', 'resume']) {
      const res = await fetch(`${server.baseUrl}/v1/calls/CA-gone/recording/${action}`, {
        method: 'POST',
        headers: AUTH,
      });
      expect(res.status).toBe(404);
    }
  });
});
