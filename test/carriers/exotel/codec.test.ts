import { describe, expect, it } from 'vitest';
import { createExotelCodec } from '../../../src/carriers/exotel/codec.js';

const CALL_SID = 'b6cfaf0a1b2c3d4e5f60718293a4b5c6';
const STREAM_SID = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';

const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const startFrame = (start: Record<string, unknown> = {}) =>
  text({
    event: 'start',
    sequence_number: '1',
    stream_sid: STREAM_SID,
    start: {
      stream_sid: STREAM_SID,
      call_sid: CALL_SID,
      account_sid: 'exotel1',
      from: '09876543210',
      to: '08012345678',
      custom_parameters: { campaign: 'x' },
      media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' },
      ...start,
    },
  });
const mediaFrame = (payload: Buffer) =>
  text(
    `{"event":"media","sequence_number":"3","stream_sid":"${STREAM_SID}","media":{"chunk":"2","timestamp":"100","payload":"${payload.toString('base64')}"}}`,
  );

function started() {
  const codec = createExotelCodec();
  codec.parse(startFrame(), false);
  return codec;
}

function parseError(frame: Buffer, isBinary = false, codec = createExotelCodec()): Error & { code?: string } {
  try {
    codec.parse(frame, isBinary);
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected the frame to be refused');
}

describe('exotel codec: frames from Exotel', () => {
  it('ignores connected', () => {
    expect(createExotelCodec().parse(text({ event: 'connected' }), false)).toEqual({
      type: 'ignored',
      event: 'connected',
    });
  });

  it('reads start with its string numbers, custom parameters and format', () => {
    expect(createExotelCodec().parse(startFrame(), false)).toEqual({
      type: 'start',
      callSid: CALL_SID,
      streamSid: STREAM_SID,
      mediaFormat: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
      token: undefined,
      parameters: { campaign: 'x' },
    });
  });

  it('reads numbers written as numbers too, and a μ-law stream', () => {
    const event = createExotelCodec().parse(
      startFrame({ media_format: { encoding: 'audio/x-mulaw', sample_rate: 8000, bit_rate: 8 } }),
      false,
    );
    expect(event).toMatchObject({ mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 } });
  });

  it('reads a 16 kHz stream and the default format when none is named', () => {
    expect(
      createExotelCodec().parse(
        startFrame({ media_format: { encoding: 'audio/x-raw', sample_rate: '16000' } }),
        false,
      ),
    ).toMatchObject({ mediaFormat: { encoding: 'linear16', sampleRate: 16000 } });
    expect(createExotelCodec().parse(startFrame({ media_format: undefined }), false)).toMatchObject({
      mediaFormat: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
    });
  });

  it('takes the stream sid from the top level when start lacks one', () => {
    expect(createExotelCodec().parse(startFrame({ stream_sid: undefined }), false)).toMatchObject({
      streamSid: STREAM_SID,
    });
  });

  it('reads a token passed back in custom_parameters, and keeps it out of the logged parameters', () => {
    const event = createExotelCodec().parse(
      startFrame({ custom_parameters: { token: 'tok', a: 'b' } }),
      false,
    );
    expect(event).toMatchObject({ token: 'tok', parameters: { a: 'b' } });
    expect((event as { parameters: Record<string, string> }).parameters.token).toBeUndefined();
  });

  it('reads custom_parameters written as a query string', () => {
    expect(createExotelCodec().parse(startFrame({ custom_parameters: 'a=1&b=2' }), false)).toMatchObject({
      parameters: { a: '1', b: '2' },
    });
  });

  it('passes media payloads on as the exact bytes, on the fast path and the general one', () => {
    const codec = started();
    const pcm = Buffer.alloc(1600);
    for (let i = 0; i < pcm.length; i++) pcm[i] = (i * 29) & 0xff;
    expect(codec.parse(mediaFrame(pcm), false)).toEqual({ type: 'audio', payload: pcm });
    // Another key order, and numbers as numbers: the general path.
    const reordered = text({
      stream_sid: STREAM_SID,
      event: 'media',
      sequence_number: 4,
      media: { payload: pcm.toString('base64'), chunk: 3, timestamp: 200 },
    });
    expect(codec.parse(reordered, false)).toEqual({ type: 'audio', payload: pcm });
  });

  it('reads dtmf, mark and stop', () => {
    const codec = started();
    expect(
      codec.parse(
        text({ event: 'dtmf', stream_sid: STREAM_SID, dtmf: { digit: '#', duration: '200' } }),
        false,
      ),
    ).toEqual({ type: 'dtmf', digit: '#' });
    expect(
      codec.parse(text({ event: 'mark', stream_sid: STREAM_SID, mark: { name: 'm-1' } }), false),
    ).toEqual({
      type: 'mark',
      name: 'm-1',
    });
    expect(
      codec.parse(
        text({ event: 'stop', stream_sid: STREAM_SID, stop: { call_sid: CALL_SID, reason: 'callended' } }),
        false,
      ),
    ).toEqual({ type: 'stop' });
  });

  it('ignores events it does not know', () => {
    expect(started().parse(text({ event: 'clear', stream_sid: STREAM_SID }), false)).toEqual({
      type: 'ignored',
      event: 'clear',
    });
    expect(started().parse(text({ event: '<script>' }), false)).toEqual({
      type: 'ignored',
      event: 'unknown',
    });
  });
});

describe('exotel codec: frames to Exotel', () => {
  it('writes media, mark and clear with the stream sid', () => {
    const codec = started();
    const pcm = Buffer.from([1, 2, 3, 4, 250, 251]);
    expect(JSON.parse(codec.audio(pcm) as string)).toEqual({
      event: 'media',
      stream_sid: STREAM_SID,
      media: { payload: pcm.toString('base64') },
    });
    expect(JSON.parse(codec.mark('m-"2"') as string)).toEqual({
      event: 'mark',
      stream_sid: STREAM_SID,
      mark: { name: 'm-"2"' },
    });
    expect(JSON.parse(codec.clear() as string)).toEqual({ event: 'clear', stream_sid: STREAM_SID });
  });

  it('cannot write before start, since every frame names the stream', () => {
    expect(() => createExotelCodec().audio(Buffer.alloc(320))).toThrow(/before start/);
    expect(() => createExotelCodec().clear()).toThrow(/before start/);
    expect(() => createExotelCodec().mark('m')).toThrow(/before start/);
  });

  it('keeps addressing the first stream when a duplicate start arrives', () => {
    const codec = started();
    codec.parse(startFrame({ stream_sid: 'other' }), false);
    expect(JSON.parse(codec.clear() as string)).toEqual({ event: 'clear', stream_sid: STREAM_SID });
  });
});

describe('exotel codec: malformed frames', () => {
  const cases: Array<[string, Buffer, boolean, RegExp]> = [
    ['a binary frame', Buffer.from([1, 2, 3, 4]), true, /binary frames are not allowed/],
    ['invalid JSON', text('{"event":"media"'), false, /invalid JSON/],
    ['a JSON array', text([]), false, /not a JSON object/],
    ['event a number', text({ event: 1 }), false, /event must be a string/],
    ['start without start', text({ event: 'start' }), false, /start must be an object/],
    ['start without call_sid', startFrame({ call_sid: undefined }), false, /call_sid must be a string/],
    ['call_sid with odd characters', startFrame({ call_sid: 'a b' }), false, /call_sid is malformed/],
    ['stream_sid a number', startFrame({ stream_sid: 5 }), false, /stream_sid must be a string/],
    ['stream_sid too long', startFrame({ stream_sid: 's'.repeat(200) }), false, /longer/],
    ['media_format a string', startFrame({ media_format: 'raw' }), false, /media_format must be an object/],
    ['an unknown encoding', startFrame({ media_format: { encoding: 'audio/opus' } }), false, /unsupported/],
    ['sample_rate words', startFrame({ media_format: { sample_rate: 'eight' } }), false, /sample_rate/],
    ['a huge sample_rate', startFrame({ media_format: { sample_rate: 9e15 } }), false, /sample_rate/],
    ['a negative sample_rate', startFrame({ media_format: { sample_rate: -8000 } }), false, /sample_rate/],
    [
      'an unsupported sample_rate',
      startFrame({ media_format: { sample_rate: '44100' } }),
      false,
      /sample rate/,
    ],
    [
      '8-bit raw audio',
      startFrame({ media_format: { encoding: 'audio/x-raw', bit_rate: '8' } }),
      false,
      /bit_rate/,
    ],
    ['two channels', startFrame({ media_format: { channels: '2' } }), false, /channels/],
    ['custom_parameters a number', startFrame({ custom_parameters: 5 }), false, /custom_parameters/],
    ['media without media', text({ event: 'media' }), false, /media must be an object/],
    [
      'media payload a number',
      text({ event: 'media', media: { payload: 5 } }),
      false,
      /payload must be a string/,
    ],
    ['bad base64', text({ event: 'media', media: { payload: 'A!AAAA==' } }), false, /base64/],
    [
      'bad base64 on the fast path',
      Buffer.from(mediaFrame(Buffer.alloc(4)).toString().replace('AAAAAA==', 'AAAAAB==')),
      false,
      /base64/,
    ],
    ['unpadded base64', text({ event: 'media', media: { payload: 'AAA' } }), false, /base64/],
    ['empty media', text({ event: 'media', media: { payload: '' } }), false, /empty/],
    ['dtmf without digit', text({ event: 'dtmf', dtmf: {} }), false, /digit must be a string/],
    ['dtmf digit not a key', text({ event: 'dtmf', dtmf: { digit: 'z' } }), false, /0-9/],
    ['mark without name', text({ event: 'mark', mark: {} }), false, /name must be a string/],
    ['mark name too long', text({ event: 'mark', mark: { name: 'm'.repeat(300) } }), false, /longer/],
  ];

  for (const [name, frame, isBinary, message] of cases) {
    it(`refuses ${name}, with a typed error`, () => {
      const err = parseError(frame, isBinary);
      expect(err.code).toBe('CALLBRIDGE_CARRIER_FRAME');
      expect(err.message).toMatch(message);
      expect(err.message.startsWith('exotel ')).toBe(true);
    });
  }

  it('refuses linear PCM that is not whole samples once the stream has started', () => {
    expect(parseError(mediaFrame(Buffer.alloc(3)), false, started()).message).toMatch(/whole 16-bit samples/);
  });

  it('never echoes frame content in its errors', () => {
    const secret = 'SECRET-TOKEN-VALUE';
    for (const frame of [
      text(`{"event":"start","token":"${secret}"`),
      startFrame({ call_sid: `${secret} x` }),
      startFrame({ media_format: { encoding: secret } }),
      text({ event: 'dtmf', dtmf: { digit: secret } }),
      text({ event: 'media', media: { payload: `${secret}!` } }),
    ]) {
      expect(parseError(frame).message).not.toContain(secret);
    }
  });
});
