import { describe, expect, it } from 'vitest';
import type { LegEvent, WireFrame } from '../../../src/call/carrier-port.js';
import { encodeClientState } from '../../../src/carriers/telnyx/client-state.js';
import { createTelnyxCodec, REORDER_WINDOW_FRAMES } from '../../../src/carriers/telnyx/codec.js';
import type { ReorderOutcome } from '../../../src/carriers/telnyx/reorder.js';

const CALL_CONTROL_ID = 'v3:9X2vxPDFY2RHSJ1EdMS0RHRksMTg7ldNxdjWbVr9zBjbGjGsSe-aiQ';
const STREAM_ID = '32DE0DEA-53CB-4B21-89A4-9E1819C043BC';

function frame(value: unknown): Buffer {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
}

function startFrame(start: Record<string, unknown> = {}, top: Record<string, unknown> = {}): Buffer {
  return frame({
    event: 'start',
    sequence_number: '1',
    stream_id: STREAM_ID,
    start: {
      user_id: '3E6F995F-85F7-4705-9741-53B116D28237',
      call_control_id: CALL_CONTROL_ID,
      call_session_id: 'ff55a038-6f5d-11ef-9692-02420aeffb1f',
      from: '+13122010094',
      to: '+13122123456',
      client_state: encodeClientState({ token: 'tok-from-state' }),
      custom_parameters: { customer_id: 'c-1' },
      media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 },
      ...start,
    },
    ...top,
  });
}

/** A media frame in the documented key order (the fast path reads it). */
function mediaFrame(sequence: number, payload: Buffer | string, track = 'inbound'): Buffer {
  const text = typeof payload === 'string' ? payload : payload.toString('base64');
  return frame(
    `{"event":"media","sequence_number":"${sequence}","media":{"track":"${track}","chunk":"${sequence - 1}","timestamp":"${(sequence - 1) * 20}","payload":"${text}"},"stream_id":"${STREAM_ID}"}`,
  );
}

function events(result: LegEvent | readonly LegEvent[]): LegEvent[] {
  return Array.isArray(result) ? [...result] : [result as LegEvent];
}

function audioBytes(result: LegEvent | readonly LegEvent[]): number[] {
  return events(result).map((event) => {
    if (event.type !== 'audio') throw new Error(`expected audio, got ${event.type}`);
    return event.payload[0]!;
  });
}

function text(wire: WireFrame): string {
  if (typeof wire !== 'string') throw new Error('expected a text frame');
  return wire;
}

function parseError(data: Buffer, isBinary = false, codec = createTelnyxCodec()): Error {
  try {
    codec.parse(data, isBinary);
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected the frame to be refused');
}

function started(hooks: Parameters<typeof createTelnyxCodec>[0] = {}, start: Record<string, unknown> = {}) {
  const codec = createTelnyxCodec(hooks);
  codec.parse(startFrame(start), false);
  return codec;
}

describe('telnyx codec: reading frames', () => {
  it('reads connected as ignored', () => {
    expect(createTelnyxCodec().parse(frame({ event: 'connected', version: '1.0.0' }), false)).toEqual({
      type: 'ignored',
      event: 'connected',
    });
  });

  it('reads start: call id, stream id, format, parameters and the token from client_state', () => {
    const event = createTelnyxCodec().parse(startFrame(), false);
    expect(event).toEqual({
      type: 'start',
      callSid: CALL_CONTROL_ID,
      streamSid: STREAM_ID,
      mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
      token: 'tok-from-state',
      parameters: { customer_id: 'c-1' },
    });
  });

  it('prefers a token custom parameter, and keeps it out of the parameters', () => {
    const event = createTelnyxCodec().parse(
      startFrame({
        custom_parameters: [
          { name: 'token', value: 'tok-param' },
          { name: 'a', value: 'b' },
        ],
      }),
      false,
    ) as Extract<LegEvent, { type: 'start' }>;
    expect(event.token).toBe('tok-param');
    expect({ ...event.parameters }).toEqual({ a: 'b' });
  });

  it('leaves the token to the path when neither channel carries one', () => {
    const event = createTelnyxCodec().parse(
      startFrame({ client_state: null, custom_parameters: undefined }),
      false,
    ) as Extract<LegEvent, { type: 'start' }>;
    expect(event.token).toBeUndefined();
    expect(event.streamSid).toBe(STREAM_ID);
  });

  it('ignores a client_state that is not ours', () => {
    const foreign = Buffer.from('{"token":"x"}').toString('base64');
    const event = createTelnyxCodec().parse(startFrame({ client_state: foreign }), false) as Extract<
      LegEvent,
      { type: 'start' }
    >;
    expect(event.token).toBeUndefined();
  });

  it('reads PCMA and L16 formats, with string numbers', () => {
    const alaw = createTelnyxCodec().parse(
      startFrame({ media_format: { encoding: 'PCMA', sample_rate: '8000', channels: '1' } }),
      false,
    ) as Extract<LegEvent, { type: 'start' }>;
    expect(alaw.mediaFormat).toEqual({ encoding: 'alaw', sampleRate: 8000, channels: 1 });
    const l16 = createTelnyxCodec().parse(
      startFrame({ media_format: { encoding: 'L16', sample_rate: 16000, channels: 1 } }),
      false,
    ) as Extract<LegEvent, { type: 'start' }>;
    expect(l16.mediaFormat).toEqual({ encoding: 'linear16', sampleRate: 16000, channels: 1 });
  });

  it('reads media through the fast path and the general path alike', () => {
    const codec = started();
    const payload = Buffer.from([1, 2, 3, 4]);
    expect(codec.parse(mediaFrame(2, payload), false)).toEqual({ type: 'audio', payload });
    const reordered = frame({
      stream_id: STREAM_ID,
      event: 'media',
      sequence_number: 3,
      media: { payload: payload.toString('base64'), track: 'inbound', chunk: 2, timestamp: 40 },
    });
    expect(codec.parse(reordered, false)).toEqual({ type: 'audio', payload });
  });

  it('ignores media of the other track', () => {
    const codec = started();
    expect(codec.parse(mediaFrame(2, Buffer.from([1]), 'outbound'), false)).toEqual({
      type: 'ignored',
      event: 'media',
    });
  });

  it('reads dtmf, mark and stop', () => {
    const codec = started();
    expect(codec.parse(frame({ event: 'dtmf', sequence_number: '2', dtmf: { digit: '#' } }), false)).toEqual({
      type: 'dtmf',
      digit: '#',
    });
    expect(codec.parse(frame({ event: 'mark', sequence_number: '3', mark: { name: 'm-1' } }), false)).toEqual(
      {
        type: 'mark',
        name: 'm-1',
      },
    );
    expect(codec.parse(frame({ event: 'stop', sequence_number: '4', stop: {} }), false)).toEqual({
      type: 'stop',
    });
  });

  it('logs error frames through the hook, bounded, and ignores them', () => {
    const errors: unknown[] = [];
    const codec = started({ streamError: (e) => errors.push(e) });
    const title = `bad\u0000thing ${'x'.repeat(500)}`;
    expect(codec.parse(frame({ event: 'error', payload: { code: 100002, title } }), false)).toEqual({
      type: 'ignored',
      event: 'error',
    });
    codec.parse(frame({ event: 'error', error: { code: 'E1', detail: 'other shape' } }), false);
    codec.parse(frame({ event: 'error' }), false);
    expect(errors).toHaveLength(3);
    const first = errors[0] as { code: string; title: string; callSid: string };
    expect(first.code).toBe('100002');
    expect(first.title.length).toBe(200);
    expect(first.title).not.toContain('\u0000');
    expect(first.callSid).toBe(CALL_CONTROL_ID);
    expect(errors[1]).toMatchObject({ code: 'E1', title: 'other shape' });
    expect(errors[2]).toMatchObject({ code: '', title: '' });
  });

  it('tolerates unknown events, bounding their names', () => {
    const codec = started();
    expect(codec.parse(frame({ event: 'something_new' }), false)).toEqual({
      type: 'ignored',
      event: 'something_new',
    });
    expect(codec.parse(frame({ event: 'x'.repeat(100) }), false)).toEqual({
      type: 'ignored',
      event: 'unknown',
    });
  });
});

describe('telnyx codec: reordering', () => {
  function reorderCodec() {
    const outcomes: ReorderOutcome[] = [];
    const codec = started({ reorder: (outcome) => outcomes.push(outcome) });
    return { codec, outcomes };
  }
  const byte = (n: number) => Buffer.from([n]);

  it('holds a frame that came early and releases both in order when the gap fills', () => {
    const { codec, outcomes } = reorderCodec();
    expect(audioBytes(codec.parse(mediaFrame(2, byte(2)), false))).toEqual([2]);
    expect(events(codec.parse(mediaFrame(4, byte(4)), false))).toEqual([]);
    expect(audioBytes(codec.parse(mediaFrame(3, byte(3)), false))).toEqual([3, 4]);
    expect(outcomes).toEqual(['reordered']);
  });

  it('gives up on a missing frame once the window is full, and drops it if it comes late', () => {
    const { codec, outcomes } = reorderCodec();
    codec.parse(mediaFrame(2, byte(2)), false);
    // 3 never comes in time.
    const released: number[] = [];
    for (let seq = 4; seq <= 4 + REORDER_WINDOW_FRAMES; seq++) {
      released.push(...audioBytes(codec.parse(mediaFrame(seq, byte(seq)), false)));
    }
    expect(released).toEqual([4, 5, 6, 7, 8]);
    expect(outcomes.filter((o) => o === 'gap')).toHaveLength(1);
    expect(events(codec.parse(mediaFrame(3, byte(3)), false))).toEqual([]);
    expect(outcomes).toContain('late');
  });

  it('drops a duplicate held frame', () => {
    const { codec, outcomes } = reorderCodec();
    codec.parse(mediaFrame(2, byte(2)), false);
    codec.parse(mediaFrame(4, byte(4)), false);
    expect(events(codec.parse(mediaFrame(4, byte(4)), false))).toEqual([]);
    expect(outcomes).toEqual(['duplicate']);
  });

  it('still delivers a late mark or dtmf (only audio is dropped when late)', () => {
    const { codec } = reorderCodec();
    codec.parse(mediaFrame(2, byte(2)), false);
    codec.parse(mediaFrame(3, byte(3)), false);
    expect(codec.parse(frame({ event: 'dtmf', sequence_number: '2', dtmf: { digit: '5' } }), false)).toEqual({
      type: 'dtmf',
      digit: '5',
    });
  });

  it('releases every held frame, in order, before stop', () => {
    const { codec } = reorderCodec();
    codec.parse(mediaFrame(2, byte(2)), false);
    codec.parse(mediaFrame(5, byte(5)), false);
    codec.parse(mediaFrame(4, byte(4)), false);
    const out = events(codec.parse(frame({ event: 'stop', sequence_number: '6' }), false));
    expect(out.map((e) => e.type)).toEqual(['audio', 'audio', 'stop']);
    expect(out.slice(0, 2).map((e) => (e as { payload: Buffer }).payload[0])).toEqual([4, 5]);
  });

  it('passes frames without a sequence number straight through', () => {
    const codec = started();
    const payload = Buffer.from([9]);
    expect(
      codec.parse(
        frame({ event: 'media', media: { track: 'inbound', payload: payload.toString('base64') } }),
        false,
      ),
    ).toEqual({ type: 'audio', payload });
  });
});

describe('telnyx codec: a jump in sequence_number', () => {
  // Issue 19: after one forward jump every later frame was taken for late and dropped, 8,995 frames
  // lost in one call. A jump resynchronises the window: every frame after it is delivered.
  const deliver = (codec: ReturnType<typeof createTelnyxCodec>, sequences: number[]): number => {
    let delivered = 0;
    for (const sequence of sequences) {
      delivered += events(codec.parse(mediaFrame(sequence, Buffer.from([sequence & 0xff])), false)).length;
    }
    return delivered;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('delivers a burst of jumped numbers and then thousands of frames numbered as before', () => {
    const outcomes: ReorderOutcome[] = [];
    const codec = createTelnyxCodec({ reorder: (outcome) => outcomes.push(outcome) });
    codec.parse(startFrame(), false);
    const sequences = [...range(2, 11), ...range(5000, 5009), ...range(12, 9011)];
    expect(deliver(codec, sequences)).toBe(sequences.length);
    expect(outcomes.filter((o) => o === 'late')).toEqual([]);
    expect(outcomes.filter((o) => o === 'resync')).toHaveLength(2);
  });

  it('delivers every frame after a forward jump that the numbering keeps', () => {
    const codec = createTelnyxCodec();
    codec.parse(startFrame(), false);
    const sequences = [...range(2, 100), ...range(100_000, 109_000)];
    expect(deliver(codec, sequences)).toBe(sequences.length);
  });

  it('still reorders within the window, and still drops a frame that is only a little late', () => {
    const codec = createTelnyxCodec();
    codec.parse(startFrame(), false);
    expect(audioBytes(codec.parse(mediaFrame(2, Buffer.from([2])), false))).toEqual([2]);
    expect(events(codec.parse(mediaFrame(4, Buffer.from([4])), false))).toEqual([]);
    expect(audioBytes(codec.parse(mediaFrame(3, Buffer.from([3])), false))).toEqual([3, 4]);
    expect(events(codec.parse(mediaFrame(2, Buffer.from([2])), false))).toEqual([]);
  });
});

describe('telnyx codec: L16 byte order', () => {
  // The L16 byte order on Telnyx's socket is not verified; the codec assumes big-endian (RTP order).
  it('turns big-endian caller audio into little-endian, and agent audio back', () => {
    const codec = started({}, { media_format: { encoding: 'L16', sample_rate: 16000, channels: 1 } });
    const bigEndian = Buffer.from([0x12, 0x34, 0xab, 0xcd]);
    expect(codec.parse(mediaFrame(2, bigEndian), false)).toEqual({
      type: 'audio',
      payload: Buffer.from([0x34, 0x12, 0xcd, 0xab]),
    });
    const littleEndian = Buffer.from([0x34, 0x12, 0xcd, 0xab]);
    const sent = JSON.parse(text(codec.audio(littleEndian))) as { media: { payload: string } };
    expect(Buffer.from(sent.media.payload, 'base64')).toEqual(bigEndian);
    // The agent's buffer is not changed in place.
    expect(littleEndian).toEqual(Buffer.from([0x34, 0x12, 0xcd, 0xab]));
  });

  it('leaves G.711 audio as it is', () => {
    const codec = started();
    const payload = Buffer.from([0x12, 0x34]);
    const sent = JSON.parse(text(codec.audio(payload))) as { media: { payload: string } };
    expect(Buffer.from(sent.media.payload, 'base64')).toEqual(payload);
  });
});

describe('telnyx codec: writing frames', () => {
  it('writes media, mark and clear as Telnyx reads them', () => {
    const codec = started();
    expect(JSON.parse(text(codec.audio(Buffer.from([0xff, 0x7f]))))).toEqual({
      event: 'media',
      media: { payload: Buffer.from([0xff, 0x7f]).toString('base64') },
    });
    expect(JSON.parse(text(codec.mark('m-"1"')))).toEqual({ event: 'mark', mark: { name: 'm-"1"' } });
    expect(JSON.parse(text(codec.clear()))).toEqual({ event: 'clear' });
  });
});

describe('telnyx codec: malformed frames', () => {
  const cases: Array<[string, Buffer, RegExp]> = [
    ['invalid JSON', frame('{"event":'), /invalid JSON/],
    ['a JSON array', frame('[1]'), /not a JSON object/],
    ['a JSON string', frame('"media"'), /not a JSON object/],
    ['a numeric event', frame({ event: 7 }), /event must be a string/],
    ['media without media', frame({ event: 'media' }), /media must be an object/],
    [
      'media with a numeric payload',
      frame({ event: 'media', media: { payload: 5 } }),
      /payload must be a string/,
    ],
    ['media with bad base64', frame({ event: 'media', media: { payload: '@@@' } }), /not valid base64/],
    ['media with unpadded base64', frame({ event: 'media', media: { payload: 'AQ' } }), /not valid base64/],
    [
      'media with a numeric track',
      frame({ event: 'media', media: { track: 1, payload: '' } }),
      /track must be a string/,
    ],
    [
      'media with a fractional sequence number',
      frame({ event: 'media', sequence_number: 1.5, media: { payload: 'AQ==' } }),
      /sequence_number/,
    ],
    [
      'media with a huge sequence number',
      frame({ event: 'media', sequence_number: '1234567890123456789', media: { payload: 'AQ==' } }),
      /sequence_number/,
    ],
    ['start without start', frame({ event: 'start' }), /start must be an object/],
    ['start without a call id', startFrame({ call_control_id: undefined }), /call_control_id/],
    ['start with a huge call id', startFrame({ call_control_id: 'x'.repeat(300) }), /call_control_id/],
    ['start with an object stream id', startFrame({}, { stream_id: {} }), /stream_id/],
    ['start without media_format', startFrame({ media_format: undefined }), /media_format is missing/],
    [
      'start with media_format a string',
      startFrame({ media_format: 'PCMU' }),
      /media_format must be an object/,
    ],
    [
      'start with an unknown codec',
      startFrame({ media_format: { encoding: 'OPUS' } }),
      /not PCMU, PCMA or L16/,
    ],
    [
      'start with a numeric codec',
      startFrame({ media_format: { encoding: 1 } }),
      /encoding must be a string/,
    ],
    [
      'start with a huge sample rate',
      startFrame({ media_format: { encoding: 'PCMU', sample_rate: 9e15 } }),
      /sample rate/,
    ],
    [
      'start with a negative sample rate',
      startFrame({ media_format: { encoding: 'PCMU', sample_rate: -8000 } }),
      /sample_rate must be a positive integer/,
    ],
    [
      'start with two channels',
      startFrame({ media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 2 } }),
      /channels/,
    ],
    ['start with custom_parameters a number', startFrame({ custom_parameters: 5 }), /custom_parameters/],
    ['dtmf without a digit', frame({ event: 'dtmf', dtmf: {} }), /digit must be a string/],
    ['dtmf with a bad digit', frame({ event: 'dtmf', dtmf: { digit: 'x' } }), /digit must be one of/],
    ['mark without a name', frame({ event: 'mark', mark: {} }), /name must be a string/],
    [
      'mark with a huge name',
      frame({ event: 'mark', mark: { name: 'm'.repeat(300) } }),
      /name must be a string/,
    ],
  ];

  for (const [name, data, message] of cases) {
    it(`refuses ${name}`, () => {
      const err = parseError(data);
      expect(err).toMatchObject({ code: 'CALLBRIDGE_CARRIER_FRAME' });
      expect(err.message).toMatch(message);
      expect(err.message).toMatch(/^telnyx /);
    });
  }

  it('refuses binary frames', () => {
    expect(parseError(frame({ event: 'connected' }), true).message).toMatch(/binary frames/);
  });

  it('never echoes frame content in its errors', () => {
    const secret = 'SECRET-CALLER-CONTENT';
    const samples = [
      frame(`{"event":"media","media":{"payload":"${secret}!"}}`),
      frame(`{"event":"${secret}`),
      startFrame({ media_format: { encoding: secret } }),
      startFrame({ call_control_id: `${secret}${'x'.repeat(300)}` }),
      frame({ event: 'dtmf', dtmf: { digit: secret } }),
    ];
    for (const data of samples) expect(parseError(data).message).not.toContain(secret);
  });
});
