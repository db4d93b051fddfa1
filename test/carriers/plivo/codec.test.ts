import { describe, expect, it } from 'vitest';
import type { LegEvent, WireFrame } from '../../../src/call/carrier-port.js';
import { createPlivoCodec, readExtraHeaders } from '../../../src/carriers/plivo/codec.js';

const CALL_ID = 'c1f7e3a0-1111-2222-3333-444455556666';
const STREAM_ID = '20170ada-f610-433b-8758-c02a2aab3662';

function frame(value: unknown): Buffer {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
}

function startFrame(start: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Buffer {
  return frame({
    event: 'start',
    sequenceNumber: 0,
    start: {
      callId: CALL_ID,
      streamId: STREAM_ID,
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000 },
      ...start,
    },
    extra_headers: 'campaign=c1,lang=en',
    ...top,
  });
}

/** A media frame in the documented key order (the fast path reads it). */
function mediaFrame(payload: Buffer | string, extra = ''): Buffer {
  const text = typeof payload === 'string' ? payload : payload.toString('base64');
  return frame(
    `{"event":"media","sequenceNumber":3,"streamId":"${STREAM_ID}","media":{"track":"inbound","timestamp":"60","chunk":2,"payload":"${text}"}${extra}}`,
  );
}

function text(wire: WireFrame): string {
  if (typeof wire !== 'string') throw new Error('expected a text frame');
  return wire;
}

function started() {
  const codec = createPlivoCodec();
  codec.parse(startFrame(), false);
  return codec;
}

function parseError(data: Buffer, isBinary = false): Error {
  try {
    createPlivoCodec().parse(data, isBinary);
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the frame to be refused');
}

describe('plivo codec: reading frames', () => {
  it('reads start: call, stream, format and extra headers (no token: it travels in the path)', () => {
    expect(createPlivoCodec().parse(startFrame(), false)).toEqual({
      type: 'start',
      callSid: CALL_ID,
      streamSid: STREAM_ID,
      mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
      parameters: { campaign: 'c1', lang: 'en' },
    });
  });

  it('reads L16 at 16 kHz and a string sample rate', () => {
    const event = createPlivoCodec().parse(
      startFrame({ mediaFormat: { encoding: 'audio/x-l16', sampleRate: '16000' } }),
      false,
    ) as Extract<LegEvent, { type: 'start' }>;
    expect(event.mediaFormat).toEqual({ encoding: 'linear16', sampleRate: 16000, channels: 1 });
  });

  it('takes the stream id from the top level when start lacks it', () => {
    const event = createPlivoCodec().parse(
      startFrame({ streamId: undefined }, { streamId: STREAM_ID }),
      false,
    );
    expect(event).toMatchObject({ streamSid: STREAM_ID });
  });

  it('reads media through the fast path and the general path alike', () => {
    const codec = started();
    const payload = Buffer.from([1, 2, 3]);
    expect(codec.parse(mediaFrame(payload), false)).toEqual({ type: 'audio', payload });
    expect(codec.parse(mediaFrame(payload, ',"extra_headers":"campaign=c1"'), false)).toEqual({
      type: 'audio',
      payload,
    });
    const general = frame({
      streamId: STREAM_ID,
      event: 'media',
      media: { payload: payload.toString('base64') },
    });
    expect(codec.parse(general, false)).toEqual({ type: 'audio', payload });
  });

  it('ignores media of another track', () => {
    const codec = started();
    expect(
      codec.parse(frame({ event: 'media', media: { track: 'outbound', payload: 'AQ==' } }), false),
    ).toEqual({ type: 'ignored', event: 'media' });
  });

  it('reads dtmf, playedStream as a mark, clearedAudio as cleared, and stop', () => {
    const codec = started();
    expect(codec.parse(frame({ event: 'dtmf', dtmf: { track: 'inbound', digit: '7' } }), false)).toEqual({
      type: 'dtmf',
      digit: '7',
    });
    expect(codec.parse(frame({ event: 'playedStream', streamId: STREAM_ID, name: 'm-3' }), false)).toEqual({
      type: 'mark',
      name: 'm-3',
    });
    expect(
      codec.parse(frame({ event: 'clearedAudio', sequenceNumber: 9, streamId: STREAM_ID }), false),
    ).toEqual({
      type: 'cleared',
    });
    expect(codec.parse(frame({ event: 'stop' }), false)).toEqual({ type: 'stop' });
  });

  it('tolerates unknown events', () => {
    expect(started().parse(frame({ event: 'somethingNew' }), false)).toEqual({
      type: 'ignored',
      event: 'somethingNew',
    });
  });
});

describe('plivo extra headers', () => {
  it('reads k=v lists and JSON objects, keeping only alphanumeric keys', () => {
    expect({ ...readExtraHeaders('a=1, b=2;c=x') }).toEqual({ a: '1', b: '2', c: 'x' });
    expect({ ...readExtraHeaders('{"a":"1","b-c":"2","d":3}') }).toEqual({ a: '1' });
    expect({ ...readExtraHeaders('{broken') }).toEqual({});
    expect({ ...readExtraHeaders(5) }).toEqual({});
    expect({ ...readExtraHeaders('a=1'.repeat(1000)) }).toEqual({});
    expect({ ...readExtraHeaders('__proto__=1') }).toEqual({});
  });
});

describe('plivo codec: writing frames', () => {
  it('writes playAudio in the stream format, checkpoint and clearAudio with the stream id', () => {
    const codec = started();
    expect(JSON.parse(text(codec.audio(Buffer.from([0xff, 0x7f]))))).toEqual({
      event: 'playAudio',
      media: {
        contentType: 'audio/x-mulaw',
        sampleRate: 8000,
        payload: Buffer.from([0xff, 0x7f]).toString('base64'),
      },
    });
    expect(JSON.parse(text(codec.mark('m-"1"')))).toEqual({
      event: 'checkpoint',
      streamId: STREAM_ID,
      name: 'm-"1"',
    });
    expect(JSON.parse(text(codec.clear()))).toEqual({ event: 'clearAudio', streamId: STREAM_ID });
  });

  it('names L16 in playAudio for an L16 stream', () => {
    const codec = createPlivoCodec();
    codec.parse(startFrame({ mediaFormat: { encoding: 'audio/x-l16', sampleRate: 16000 } }), false);
    expect(JSON.parse(text(codec.audio(Buffer.alloc(4))))).toMatchObject({
      media: { contentType: 'audio/x-l16', sampleRate: 16000 },
    });
  });

  it('keeps the first stream id when a second start arrives', () => {
    const codec = started();
    codec.parse(startFrame({ streamId: 'other-stream' }), false);
    expect(JSON.parse(text(codec.clear()))).toEqual({ event: 'clearAudio', streamId: STREAM_ID });
  });

  it('refuses to write before start', () => {
    const codec = createPlivoCodec();
    expect(() => codec.audio(Buffer.alloc(2))).toThrow(/before start/);
    expect(() => codec.mark('m')).toThrow(/before start/);
    expect(() => codec.clear()).toThrow(/before start/);
  });
});

describe('plivo codec: malformed frames', () => {
  const cases: Array<[string, Buffer, RegExp]> = [
    ['invalid JSON', frame('{"event":'), /invalid JSON/],
    ['a JSON array', frame('[]'), /not a JSON object/],
    ['null', frame('null'), /not a JSON object/],
    ['a missing event', frame({}), /event must be a string/],
    ['media without media', frame({ event: 'media' }), /media must be an object/],
    [
      'media with a numeric payload',
      frame({ event: 'media', media: { payload: 1 } }),
      /payload must be a string/,
    ],
    ['media with bad base64', frame({ event: 'media', media: { payload: 'a*b=' } }), /not valid base64/],
    ['media with an object track', frame({ event: 'media', media: { track: {}, payload: '' } }), /track/],
    ['start without start', frame({ event: 'start' }), /start must be an object/],
    ['start without callId', startFrame({ callId: undefined }), /callId/],
    ['start with a numeric callId', startFrame({ callId: 5 }), /callId/],
    ['start without a streamId anywhere', startFrame({ streamId: undefined }), /streamId/],
    [
      'start with mediaFormat a string',
      startFrame({ mediaFormat: 'mulaw' }),
      /mediaFormat must be an object/,
    ],
    [
      'start with an unknown encoding',
      startFrame({ mediaFormat: { encoding: 'audio/opus' } }),
      /encoding is not/,
    ],
    [
      'start with a huge sample rate',
      startFrame({ mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 9e15 } }),
      /sample rate/,
    ],
    [
      'start with a zero sample rate',
      startFrame({ mediaFormat: { sampleRate: 0 } }),
      /sampleRate must be a positive integer/,
    ],
    [
      'start with a fractional sample rate',
      startFrame({ mediaFormat: { sampleRate: 8000.5 } }),
      /sampleRate/,
    ],
    ['dtmf without dtmf', frame({ event: 'dtmf' }), /dtmf must be an object/],
    ['dtmf with a bad digit', frame({ event: 'dtmf', dtmf: { digit: '10' } }), /digit must be one of/],
    ['playedStream without a name', frame({ event: 'playedStream' }), /name must be a string/],
    [
      'playedStream with a huge name',
      frame({ event: 'playedStream', name: 'n'.repeat(257) }),
      /name must be a string/,
    ],
  ];
  for (const [name, data, message] of cases) {
    it(`refuses ${name}`, () => {
      const err = parseError(data);
      expect(err).toMatchObject({ code: 'CALLBRIDGE_CARRIER_FRAME' });
      expect(err.message).toMatch(message);
      expect(err.message).toMatch(/^plivo /);
    });
  }

  it('refuses binary frames', () => {
    expect(parseError(frame({ event: 'stop' }), true).message).toMatch(/binary frames/);
  });

  it('never echoes frame content in its errors', () => {
    const secret = 'SECRET-CALLER-CONTENT';
    for (const data of [
      frame(`{"event":"media","media":{"payload":"${secret}!"}}`),
      frame(`${secret}`),
      startFrame({ mediaFormat: { encoding: secret } }),
      frame({ event: 'dtmf', dtmf: { digit: secret } }),
    ]) {
      expect(parseError(data).message).not.toContain(secret);
    }
  });
});
