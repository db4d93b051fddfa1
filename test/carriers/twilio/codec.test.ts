import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { WireFrame } from '../../../src/call/carrier-port.js';
import { createTwilioCodec } from '../../../src/carriers/twilio/codec.js';

const STREAM_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const CALL_SID = 'CA5ef8732a3c49700934481addd5ce1659';

function frame(value: unknown): Buffer {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
}

function startFrame(start: Record<string, unknown> = {}): Buffer {
  return frame({
    event: 'start',
    sequenceNumber: '1',
    streamSid: STREAM_SID,
    start: {
      accountSid: 'AC0123',
      streamSid: STREAM_SID,
      callSid: CALL_SID,
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      customParameters: { token: 'tok-1' },
      ...start,
    },
  });
}

function mediaFrame(payload: unknown, track: unknown = 'inbound'): Buffer {
  return frame({
    event: 'media',
    sequenceNumber: '4',
    streamSid: STREAM_SID,
    media: { track, chunk: '2', timestamp: '5', payload },
  });
}

/** Twilio frames are JSON text: a Buffer here would go out as a binary WebSocket frame. */
function text(wire: WireFrame): string {
  if (typeof wire !== 'string') throw new Error('expected a text frame');
  return wire;
}

function startedStream() {
  const stream = createTwilioCodec();
  stream.parse(startFrame(), false);
  return stream;
}

function parseError(data: Buffer, isBinary = false): unknown {
  try {
    createTwilioCodec().parse(data, isBinary);
  } catch (err) {
    return err;
  }
  return undefined;
}

function expectFrameError(data: Buffer, message: RegExp, isBinary = false): void {
  const caught = parseError(data, isBinary);
  expect(caught).toBeInstanceOf(Error);
  expect((caught as { code?: string }).code).toBe('CALLBRIDGE_CARRIER_FRAME');
  expect((caught as Error).message).toMatch(message);
}

describe('twilio parse: events', () => {
  it('ignores connected', () => {
    const event = createTwilioCodec().parse(
      frame({ event: 'connected', protocol: 'Call', version: '1.0.0' }),
      false,
    );
    expect(event).toEqual({ type: 'ignored', event: 'connected' });
  });

  it('reads start with its media format, custom parameters and the token parameter', () => {
    expect(createTwilioCodec().parse(startFrame(), false)).toEqual({
      type: 'start',
      callSid: CALL_SID,
      streamSid: STREAM_SID,
      mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
      parameters: { token: 'tok-1' },
      token: 'tok-1',
    });
  });

  it('leaves the token to the media URL when no token parameter came', () => {
    const event = createTwilioCodec().parse(startFrame({ customParameters: { other: 'x' } }), false);
    expect(event).toMatchObject({ type: 'start', parameters: { other: 'x' } });
    expect(event).not.toHaveProperty('token');
  });

  it.each([
    ['audio/x-mulaw', 'mulaw'],
    ['audio/x-alaw', 'alaw'],
    ['audio/l16', 'linear16'],
    ['audio/x-l16', 'linear16'],
  ])('maps encoding %s to %s', (wire, encoding) => {
    const event = createTwilioCodec().parse(
      startFrame({ mediaFormat: { encoding: wire, sampleRate: 16000, channels: 2 } }),
      false,
    );
    expect(event).toMatchObject({ type: 'start', mediaFormat: { encoding, sampleRate: 16000, channels: 2 } });
  });

  it('defaults sample rate and channels, and the whole format when absent', () => {
    const partial = createTwilioCodec().parse(
      startFrame({ mediaFormat: { encoding: 'audio/x-alaw' } }),
      false,
    );
    expect(partial).toMatchObject({ mediaFormat: { encoding: 'alaw', sampleRate: 8000, channels: 1 } });
    const absent = createTwilioCodec().parse(startFrame({ mediaFormat: undefined }), false);
    expect(absent).toMatchObject({ mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 } });
  });

  it('keeps only string custom parameters and treats absent ones as empty', () => {
    const event = createTwilioCodec().parse(
      startFrame({ customParameters: { token: 't', n: 5, o: { a: 1 }, z: null } }),
      false,
    );
    expect(event.type === 'start' && { ...event.parameters }).toEqual({ token: 't' });
    const raw = `{"event":"start","start":{"callSid":"CA1","streamSid":"MZ1","customParameters":{"__proto__":"p","k":"v"}}}`;
    const proto = createTwilioCodec().parse(frame(raw), false);
    expect(proto.type === 'start' && Object.entries(proto.parameters)).toEqual([
      ['__proto__', 'p'],
      ['k', 'v'],
    ]);
    const none = createTwilioCodec().parse(startFrame({ customParameters: undefined }), false);
    expect(none.type === 'start' && Object.keys(none.parameters)).toEqual([]);
  });

  it('decodes inbound media, also before start and without a track', () => {
    const bytes = randomBytes(160);
    const stream = createTwilioCodec();
    expect(stream.parse(mediaFrame(bytes.toString('base64')), false)).toEqual({
      type: 'audio',
      payload: bytes,
    });
    const untracked = stream.parse(
      frame({ event: 'media', media: { payload: bytes.toString('base64') } }),
      false,
    );
    expect(untracked).toEqual({ type: 'audio', payload: bytes });
  });

  it('reads an empty payload as an empty buffer', () => {
    expect(createTwilioCodec().parse(mediaFrame(''), false)).toEqual({
      type: 'audio',
      payload: Buffer.alloc(0),
    });
  });

  it('ignores media from other tracks', () => {
    const payload = randomBytes(160).toString('base64');
    expect(createTwilioCodec().parse(mediaFrame(payload, 'outbound'), false)).toEqual({
      type: 'ignored',
      event: 'media',
    });
  });

  it('decodes payloads of every length byte-exactly', () => {
    const stream = createTwilioCodec();
    for (let length = 0; length <= 400; length++) {
      const bytes = randomBytes(length);
      const event = stream.parse(mediaFrame(bytes.toString('base64')), false);
      expect(event.type === 'audio' && event.payload.equals(bytes)).toBe(true);
    }
  });

  it.each(['0', '5', '9', '*', '#', 'A', 'B', 'C', 'D'])('reads dtmf digit %s', (digit) => {
    const event = createTwilioCodec().parse(
      frame({ event: 'dtmf', streamSid: STREAM_SID, dtmf: { track: 'inbound_track', digit } }),
      false,
    );
    expect(event).toEqual({ type: 'dtmf', digit });
  });

  it('reads mark and stop', () => {
    const stream = startedStream();
    expect(
      stream.parse(frame({ event: 'mark', streamSid: STREAM_SID, mark: { name: 'm-7' } }), false),
    ).toEqual({
      type: 'mark',
      name: 'm-7',
    });
    expect(
      stream.parse(frame({ event: 'stop', stop: { accountSid: 'AC0123', callSid: CALL_SID } }), false),
    ).toEqual({ type: 'stop' });
  });

  it('ignores unknown events', () => {
    expect(createTwilioCodec().parse(frame({ event: 'future-thing', x: 1 }), false)).toEqual({
      type: 'ignored',
      event: 'future-thing',
    });
  });
});

describe('twilio parse: malformed frames', () => {
  it('rejects binary frames', () => {
    expectFrameError(frame({ event: 'connected' }), /binary/, true);
  });

  it.each([
    ['invalid JSON', '{"event":', /invalid JSON/],
    ['a JSON array', '[1,2]', /not a JSON object/],
    ['JSON null', 'null', /not a JSON object/],
    ['a JSON string', '"media"', /not a JSON object/],
    ['a missing event', '{"media":{}}', /event must be a string/],
    ['a numeric event', '{"event":7}', /event must be a string/],
  ])('rejects %s', (_name, text, message) => {
    expectFrameError(frame(text), message);
  });

  it.each([
    ['start without start object', { event: 'start' }, /start: start must be an object/],
    ['start as array', { event: 'start', start: [] }, /start: start must be an object/],
    [
      'numeric callSid',
      { event: 'start', start: { callSid: 1, streamSid: 'MZ1' } },
      /callSid must be a string/,
    ],
    ['missing streamSid', { event: 'start', start: { callSid: 'CA1' } }, /streamSid must be a string/],
    [
      'unknown encoding',
      {
        event: 'start',
        start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: { encoding: 'audio/opus' } },
      },
      /unsupported mediaFormat.encoding/,
    ],
    [
      'numeric encoding',
      { event: 'start', start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: { encoding: 1 } } },
      /encoding must be a string/,
    ],
    [
      'string sampleRate',
      { event: 'start', start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: { sampleRate: '8000' } } },
      /sampleRate must be a positive integer/,
    ],
    [
      'zero channels',
      { event: 'start', start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: { channels: 0 } } },
      /channels must be a positive integer/,
    ],
    [
      'mediaFormat as string',
      { event: 'start', start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: 'audio/x-mulaw' } },
      /mediaFormat must be an object/,
    ],
    [
      'customParameters as array',
      { event: 'start', start: { callSid: 'CA1', streamSid: 'MZ1', customParameters: ['a'] } },
      /customParameters must be an object/,
    ],
    ['media without media object', { event: 'media' }, /media: media must be an object/],
    ['numeric payload', { event: 'media', media: { payload: 5 } }, /payload must be a string/],
    ['missing payload', { event: 'media', media: { track: 'inbound' } }, /payload must be a string/],
    ['numeric track', { event: 'media', media: { track: 1, payload: '' } }, /track must be a string/],
    ['dtmf without dtmf object', { event: 'dtmf' }, /dtmf: dtmf must be an object/],
    ['numeric digit', { event: 'dtmf', dtmf: { digit: 1 } }, /digit must be a string/],
    ['unknown digit', { event: 'dtmf', dtmf: { digit: 'E' } }, /digit must be one of/],
    ['two digits', { event: 'dtmf', dtmf: { digit: '12' } }, /digit must be one of/],
    ['mark without mark object', { event: 'mark' }, /mark: mark must be an object/],
    ['numeric mark name', { event: 'mark', mark: { name: 7 } }, /name must be a string/],
  ])('rejects %s', (_name, value, message) => {
    expectFrameError(frame(value), message);
  });

  it.each([
    ['a character outside the alphabet', 'AAA*'],
    ['a base64url character', 'ab-_'],
    ['embedded whitespace', 'AAAA AAA='],
    ['a length that is not a multiple of 4', 'AAAAA'],
    ['missing padding', 'AAA'],
    ['too much padding', 'AA==='],
    ['padding in the middle', 'AA==AAAA'],
    ['non-zero pad bits', 'AB=='],
    ['a lone padding block', '===='],
    ['a non-ASCII character', 'AAA\u00e9'],
  ])('rejects a payload with %s', (_name, payload) => {
    expectFrameError(mediaFrame(payload), /payload is not valid base64/);
  });

  it('never echoes frame content in the error message', () => {
    const secret = 'SECRET-TOKEN-VALUE';
    const cases = [
      mediaFrame(`${secret}*`),
      frame(`{"event":"${secret}`),
      frame({
        event: 'start',
        start: { callSid: 'CA1', streamSid: 'MZ1', mediaFormat: { encoding: secret } },
      }),
      frame({ event: 'dtmf', dtmf: { digit: secret } }),
    ];
    for (const data of cases) {
      const caught = parseError(data);
      expect(caught).toBeInstanceOf(Error);
      expect((caught as Error).message).not.toContain(secret);
    }
  });
});

describe('twilio serialize', () => {
  it('throws a programming error before start', () => {
    const stream = createTwilioCodec();
    expect(() => stream.audio(Buffer.alloc(160))).toThrow(/before start/);
    expect(() => stream.clear()).toThrow(/before start/);
    expect(() => stream.mark('m-1')).toThrow(/before start/);
  });

  it('writes media, mark and clear frames exactly', () => {
    const stream = startedStream();
    expect(stream.audio(Buffer.from([0xff, 0x7f, 0x00]))).toBe(
      `{"event":"media","streamSid":"${STREAM_SID}","media":{"payload":"/38A"}}`,
    );
    expect(stream.mark('m-7')).toBe(`{"event":"mark","streamSid":"${STREAM_SID}","mark":{"name":"m-7"}}`);
    expect(stream.clear()).toBe(`{"event":"clear","streamSid":"${STREAM_SID}"}`);
  });

  it('escapes the stream id and mark names as JSON', () => {
    const stream = createTwilioCodec();
    const sid = 'MZ"\\\n\u2028';
    stream.parse(startFrame({ streamSid: sid }), false);
    const name = 'say "hi"\\\u0001';
    expect(JSON.parse(text(stream.mark(name)))).toEqual({ event: 'mark', streamSid: sid, mark: { name } });
    expect(JSON.parse(text(stream.clear()))).toEqual({ event: 'clear', streamSid: sid });
    expect(JSON.parse(text(stream.audio(Buffer.alloc(0))))).toEqual({
      event: 'media',
      streamSid: sid,
      media: { payload: '' },
    });
  });

  it('round-trips random payloads byte-exactly through serialize and parse', () => {
    const stream = startedStream();
    for (let i = 0; i < 200; i++) {
      const bytes = randomBytes(i % 7 === 0 ? 160 : i * 3 + (i % 3));
      const sent = JSON.parse(text(stream.audio(bytes))) as { media: { payload: string } };
      // What we send, placed in an inbound media frame, must decode to the very same bytes.
      const event = stream.parse(mediaFrame(sent.media.payload), false);
      expect(event.type === 'audio' && event.payload.equals(bytes)).toBe(true);
    }
  });

  it('round-trips mark names through serialize and parse', () => {
    const stream = startedStream();
    const name = 'm-"7"<&>';
    const sent = stream.mark(name);
    expect(stream.parse(frame(text(sent)), false)).toEqual({ type: 'mark', name });
  });

  it('keeps serializing for the first start when another one arrives', () => {
    const stream = startedStream();
    stream.parse(startFrame({ streamSid: 'MZ2' }), false);
    expect(stream.clear()).toBe(`{"event":"clear","streamSid":"${STREAM_SID}"}`);
  });
});

describe('inbound media fast path', () => {
  // The common media shapes skip JSON.parse; they must read exactly as the general path does.
  const payload = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 37) % 256));
  const b64 = payload.toString('base64');
  const started = () => {
    const stream = createTwilioCodec();
    stream.parse(
      Buffer.from(
        JSON.stringify({
          event: 'start',
          start: {
            callSid: 'CA1',
            streamSid: 'MZ1',
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
          },
        }),
      ),
      false,
    );
    return stream;
  };

  it.each([
    `{"event":"media","sequenceNumber":"4","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"${b64}"},"streamSid":"MZ1"}`,
    `{"event":"media","sequenceNumber":"4","streamSid":"MZ1","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"${b64}"}}`,
    `{ "event": "media", "media": { "payload": "${b64}" }, "streamSid": "MZ1" }`,
  ])('reads %s byte-exact', (frame) => {
    const event = started().parse(Buffer.from(frame), false);
    expect(event).toEqual({ type: 'audio', payload });
  });

  it('rejects invalid base64 in a frame of the fast shape', () => {
    const frame = `{"event":"media","sequenceNumber":"4","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"QUJD="},"streamSid":"MZ1"}`;
    expect(() => started().parse(Buffer.from(frame), false)).toThrow(/base64/);
  });
});
