// Exotel's media stream over a real socket: the test helper plays Exotel (dialing the URL the routes
// handed out, Basic auth and all), the project's codec reads it and writes back, byte for byte.
import { afterEach, describe, expect, it } from 'vitest';
import { createExotelAdapter } from '../../../src/carriers/exotel/adapter.js';
import { exotelStreamUrl } from '../../../src/carriers/exotel/routes.js';
import { upgradeCredentials } from '../../../src/carriers/exotel/upgrade-auth.js';
import { load, removeProjects } from '../../config/project.js';
import { type CodecSocketServer, startCodecSocket } from '../../helpers/codec-socket.js';
import {
  type ExotelStreamClient,
  exotelTarget,
  newExotelSid,
  openExotelStream,
} from '../../helpers/exotel-carrier.js';

const SECRET = 'stream-token-secret-of-the-exotel-media-test';

let server: CodecSocketServer | undefined;
let client: ExotelStreamClient | undefined;
afterEach(async () => {
  client?.ws.terminate();
  await server?.close();
  server = client = undefined;
  removeProjects();
});

function pcm(bytes: number, seed: number): Buffer {
  const out = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) out[i] = (i * 13 + seed) & 0xff;
  return out;
}

async function open() {
  const adapter = createExotelAdapter(load({ STREAM_TOKEN_SECRET: SECRET }));
  server = await startCodecSocket({
    carrier: 'exotel',
    createCodec: adapter.createCodec,
    verifyUpgrade: (req) => adapter.verifyUpgrade!(req),
  });
  const handedOut = exotelStreamUrl(
    'wss://bridge.example.com/media/exotel/i-1/tok-9',
    upgradeCredentials(SECRET, 'tok-9'),
    8000,
  );
  const callSid = newExotelSid();
  client = await openExotelStream(exotelTarget(handedOut, server.url.replace('ws', 'http')), { callSid });
  return { conn: await server.nextConnection(), callSid, client };
}

describe('exotel media socket', () => {
  it('carries start, caller audio, DTMF, marks, agent audio and clear, bytes intact', async () => {
    const { conn, callSid, client: exotel } = await open();
    expect(conn.pathToken).toBe('tok-9');
    exotel.connected();
    exotel.start();
    const caller = [pcm(1600, 1), pcm(1600, 2)];
    for (const chunk of caller) exotel.media(chunk);
    exotel.dtmf('5');
    await conn.waitFor((e) => e.type === 'dtmf');
    expect(conn.events).toEqual([
      { type: 'ignored', event: 'connected' },
      {
        type: 'start',
        callSid,
        streamSid: exotel.streamSid,
        mediaFormat: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
        token: undefined,
        parameters: {},
      },
      ...caller.map((payload) => ({ type: 'audio', payload })),
      { type: 'dtmf', digit: '5' },
    ]);

    const agent = [pcm(3200, 7), pcm(6400, 8)];
    for (const chunk of agent) conn.send(conn.codec.audio(chunk));
    conn.send(conn.codec.mark('m-1'));
    conn.send(conn.codec.clear());
    await conn.waitFor((e) => e.type === 'mark');
    await exotel.waitFor((m) => m.event === 'clear');
    expect(exotel.chunks()).toEqual(agent);
    expect(exotel.received.map((m) => m.event)).toEqual(['media', 'media', 'mark', 'clear']);
    expect(exotel.received.every((m) => m.stream_sid === exotel.streamSid)).toBe(true);

    exotel.stop();
    await conn.waitFor((e) => e.type === 'stop');
    expect(conn.errors).toEqual([]);
  });

  it('refuses junk without crashing: binary frames, bad base64, a huge sample rate', async () => {
    const { conn, client: exotel } = await open();
    exotel.sendRaw(Buffer.from([1, 2, 3]), true);
    exotel.sendRaw('{"event":"media","media":{"payload":"%%%"}}', false);
    exotel.start({ mediaFormat: { encoding: 'audio/x-raw', sample_rate: '999999' } });
    exotel.dtmf('1');
    await conn.waitFor((e) => e.type === 'dtmf');
    expect(conn.errors).toEqual([
      'exotel frame: binary frames are not allowed',
      'exotel media: payload is not valid base64',
      'exotel start: media_format sample rate 999999 is not one of 8000, 16000, 24000',
    ]);
  });
});
