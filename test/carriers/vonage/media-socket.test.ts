// Vonage's media stream over a real socket: the test helper plays Vonage, the project's codec reads
// it and writes back, byte for byte.
import { afterEach, describe, expect, it } from 'vitest';
import { createVonageCodec } from '../../../src/carriers/vonage/codec.js';
import { type CodecSocketServer, startCodecSocket } from '../../helpers/codec-socket.js';
import { openVonageStream, type VonageStreamClient } from '../../helpers/vonage-carrier.js';

const UUID = '63f61863-4a51-4f6b-86e1-46edebcf9356';
const ENDPOINT = { contentType: 'audio/l16;rate=16000', headers: { call_uuid: UUID, token: 'tok-1' } };

let server: CodecSocketServer | undefined;
let client: VonageStreamClient | undefined;
afterEach(async () => {
  client?.ws.terminate();
  await server?.close();
  server = client = undefined;
});

function frame(seed: number): Buffer {
  const out = Buffer.alloc(640);
  for (let i = 0; i < out.length; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

describe('vonage media socket', () => {
  it('carries start, caller audio, DTMF, agent audio, notify and clear, bytes intact', async () => {
    server = await startCodecSocket({ carrier: 'vonage', createCodec: createVonageCodec });
    client = await openVonageStream(`${server.url}/media/vonage/i-1/tok-1`, ENDPOINT);
    const conn = await server.nextConnection();
    expect(conn.pathToken).toBe('tok-1');

    client.connected();
    const caller = [frame(1), frame(2), frame(3)];
    for (const f of caller) client.sendAudio(f);
    client.dtmf('#');
    await conn.waitFor((e) => e.type === 'dtmf');
    expect(conn.events).toEqual([
      {
        type: 'start',
        callSid: UUID,
        streamSid: UUID,
        mediaFormat: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
        token: 'tok-1',
        parameters: { call_uuid: UUID },
      },
      ...caller.map((payload) => ({ type: 'audio', payload })),
      { type: 'dtmf', digit: '#' },
    ]);

    const agent = [frame(7), frame(8)];
    for (const f of agent) conn.send(conn.codec.audio(f));
    conn.send(conn.codec.mark('m-1'));
    conn.send(conn.codec.clear());
    await conn.waitFor((e) => e.type === 'cleared');
    expect(client.audioMessages).toEqual(agent);
    expect(client.controls).toEqual([{ action: 'notify', payload: { mark: 'm-1' } }, { action: 'clear' }]);
    expect(conn.events.slice(-2)).toEqual([{ type: 'mark', name: 'm-1' }, { type: 'cleared' }]);
    expect(conn.errors).toEqual([]);
  });

  it('refuses junk without crashing: odd binary, text that is not JSON', async () => {
    server = await startCodecSocket({ carrier: 'vonage', createCodec: createVonageCodec });
    client = await openVonageStream(`${server.url}/media/vonage/i-1/tok-1`, ENDPOINT);
    const conn = await server.nextConnection();
    client.sendRaw(Buffer.alloc(3), true);
    client.sendRaw('hello', false);
    client.dtmf('1');
    await conn.waitFor((e) => e.type === 'dtmf');
    expect(conn.errors).toEqual([
      'vonage audio: frame must hold whole 16-bit samples',
      'vonage frame: invalid JSON',
    ]);
  });
});
