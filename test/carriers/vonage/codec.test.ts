import { describe, expect, it } from 'vitest';
import { createVonageCodec, parseContentType } from '../../../src/carriers/vonage/codec.js';

const UUID = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';

const text = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
const connected = (extra: Record<string, unknown> = {}) =>
  text({
    event: 'websocket:connected',
    'content-type': 'audio/l16;rate=16000',
    call_uuid: UUID,
    token: 'tok',
    ...extra,
  });

function parseError(frame: Buffer, isBinary = false): Error & { code?: string } {
  try {
    createVonageCodec().parse(frame, isBinary);
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected the frame to be refused');
}

describe('vonage codec: frames from Vonage', () => {
  it('reads websocket:connected as start, with the call id, token and format from its headers', () => {
    const event = createVonageCodec().parse(connected({ from: '447700900000' }), false);
    expect(event).toEqual({
      type: 'start',
      callSid: UUID,
      streamSid: UUID,
      mediaFormat: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
      token: 'tok',
      parameters: { call_uuid: UUID, from: '447700900000' },
    });
  });

  it('keeps the token out of the parameters that go to logs', () => {
    const event = createVonageCodec().parse(connected(), false);
    expect(event).toMatchObject({ type: 'start' });
    expect(Object.values((event as { parameters: Record<string, string> }).parameters)).not.toContain('tok');
  });

  it('reads a start without a token: the path carries it then', () => {
    const event = createVonageCodec().parse(connected({ token: undefined }), false);
    expect(event).toMatchObject({ type: 'start', token: undefined });
  });

  it('reads 8 and 24 kHz streams', () => {
    for (const rate of [8000, 24000]) {
      const event = createVonageCodec().parse(connected({ 'content-type': `audio/l16;rate=${rate}` }), false);
      expect(event).toMatchObject({ mediaFormat: { encoding: 'linear16', sampleRate: rate, channels: 1 } });
    }
  });

  it('passes binary audio on as the very same bytes', () => {
    const frame = Buffer.alloc(640);
    for (let i = 0; i < frame.length; i++) frame[i] = (i * 37) & 0xff;
    const event = createVonageCodec().parse(frame, true);
    expect(event).toEqual({ type: 'audio', payload: frame });
    expect((event as { payload: Buffer }).payload).toBe(frame);
  });

  it('reads dtmf, cleared and notify', () => {
    const codec = createVonageCodec();
    expect(codec.parse(text({ event: 'websocket:dtmf', digit: '5', duration: 260 }), false)).toEqual({
      type: 'dtmf',
      digit: '5',
    });
    expect(codec.parse(text({ event: 'websocket:cleared' }), false)).toEqual({ type: 'cleared' });
    expect(codec.parse(text({ event: 'websocket:notify', payload: { mark: 'm-3' } }), false)).toEqual({
      type: 'mark',
      name: 'm-3',
    });
  });

  it('ignores a notify that is not ours and events it does not know', () => {
    const codec = createVonageCodec();
    expect(codec.parse(text({ event: 'websocket:notify', payload: { other: 1 } }), false)).toEqual({
      type: 'ignored',
      event: 'websocket:notify',
    });
    expect(codec.parse(text({ event: 'websocket:media:update', x: 1 }), false)).toEqual({
      type: 'ignored',
      event: 'websocket:media:update',
    });
    // An event name that does not look like one is not echoed into logs and metrics.
    expect(codec.parse(text({ event: 'x'.repeat(500) }), false)).toEqual({
      type: 'ignored',
      event: 'unknown',
    });
    expect(codec.parse(text({ event: 'a b\nc' }), false)).toEqual({ type: 'ignored', event: 'unknown' });
  });

  it('drops extra headers beyond a bound instead of refusing the stream', () => {
    const extra: Record<string, unknown> = {};
    for (let i = 0; i < 100; i++) extra[`h${i}`] = 'v';
    extra.long = 'x'.repeat(10_000);
    extra.number = 5;
    const event = createVonageCodec().parse(connected(extra), false) as {
      parameters: Record<string, string>;
    };
    expect(Object.keys(event.parameters).length).toBeLessThanOrEqual(16);
    expect(event.parameters.long).toBeUndefined();
    expect(event.parameters.number).toBeUndefined();
  });

  it('keeps a __proto__ header an ordinary key', () => {
    const frame = Buffer.from(
      `{"event":"websocket:connected","content-type":"audio/l16;rate=16000","call_uuid":"${UUID}","__proto__":"x"}`,
    );
    const event = createVonageCodec().parse(frame, false) as { parameters: Record<string, string> };
    expect(Object.getPrototypeOf(event.parameters)).toBeNull();
    expect(event.parameters.__proto__).toBe('x');
  });
});

describe('vonage codec: frames to Vonage', () => {
  it('sends audio as the same bytes in one binary message', () => {
    const payload = Buffer.from([1, 2, 3, 4]);
    expect(createVonageCodec().audio(payload)).toBe(payload);
  });

  it('writes clear and notify with the mark name in its payload', () => {
    const codec = createVonageCodec();
    expect(JSON.parse(codec.clear() as string)).toEqual({ action: 'clear' });
    expect(JSON.parse(codec.mark('m-"1"') as string)).toEqual({
      action: 'notify',
      payload: { mark: 'm-"1"' },
    });
  });

  it('reads back the notify it wrote', () => {
    const codec = createVonageCodec();
    const sent = JSON.parse(codec.mark('goodbye') as string) as { payload: unknown };
    expect(codec.parse(text({ event: 'websocket:notify', payload: sent.payload }), false)).toEqual({
      type: 'mark',
      name: 'goodbye',
    });
  });
});

describe('vonage codec: malformed frames', () => {
  const cases: Array<[string, Buffer, boolean, RegExp]> = [
    ['invalid JSON', text('{"event":'), false, /invalid JSON/],
    ['a JSON array', text([1, 2]), false, /not a JSON object/],
    ['a JSON string', text('"hi"'), false, /not a JSON object/],
    ['null', text('null'), false, /not a JSON object/],
    ['event not a string', text({ event: 5 }), false, /event must be a string/],
    ['no event', text({}), false, /event must be a string/],
    ['content-type missing', text({ event: 'websocket:connected', call_uuid: UUID }), false, /content-type/],
    ['content-type a number', connected({ 'content-type': 16000 }), false, /content-type must be a string/],
    ['content-type not l16', connected({ 'content-type': 'audio/pcmu;rate=8000' }), false, /audio\/l16/],
    ['content-type without rate', connected({ 'content-type': 'audio/l16' }), false, /no rate/],
    ['rate not a number', connected({ 'content-type': 'audio/l16;rate=fast' }), false, /integer/],
    ['a huge rate', connected({ 'content-type': 'audio/l16;rate=9000000000000000' }), false, /integer/],
    ['an unsupported rate', connected({ 'content-type': 'audio/l16;rate=44100' }), false, /sample rate/],
    ['call_uuid missing', connected({ call_uuid: undefined }), false, /call_uuid must be a string/],
    ['call_uuid a number', connected({ call_uuid: 12 }), false, /call_uuid must be a string/],
    ['call_uuid with odd characters', connected({ call_uuid: 'a/b' }), false, /malformed/],
    ['call_uuid too long', connected({ call_uuid: 'a'.repeat(65) }), false, /longer/],
    ['token not a string', connected({ token: 5 }), false, /token must be a string/],
    ['token too long', connected({ token: 't'.repeat(5000) }), false, /token is longer/],
    ['dtmf without digit', text({ event: 'websocket:dtmf' }), false, /digit must be a string/],
    ['dtmf digit a number', text({ event: 'websocket:dtmf', digit: 5 }), false, /digit must be a string/],
    ['dtmf digit not a key', text({ event: 'websocket:dtmf', digit: 'x' }), false, /0-9/],
    ['dtmf digits', text({ event: 'websocket:dtmf', digit: '12' }), false, /longer/],
    ['notify without payload', text({ event: 'websocket:notify' }), false, /payload must be an object/],
    ['notify payload an array', text({ event: 'websocket:notify', payload: [] }), false, /payload must be/],
    [
      'notify mark a number',
      text({ event: 'websocket:notify', payload: { mark: 1 } }),
      false,
      /mark must be/,
    ],
    [
      'notify mark too long',
      text({ event: 'websocket:notify', payload: { mark: 'm'.repeat(300) } }),
      false,
      /longer/,
    ],
    ['binary with an odd length', Buffer.alloc(641), true, /whole 16-bit samples/],
    ['empty binary', Buffer.alloc(0), true, /whole 16-bit samples/],
  ];

  for (const [name, frame, isBinary, message] of cases) {
    it(`refuses ${name}, with a typed error`, () => {
      const err = parseError(frame, isBinary);
      expect(err.code).toBe('CALLBRIDGE_CARRIER_FRAME');
      expect(err.message).toMatch(message);
      expect(err.message.startsWith('vonage ')).toBe(true);
    });
  }

  it('never echoes frame content in its errors', () => {
    const secret = 'SECRET-TOKEN-VALUE';
    for (const frame of [
      text(`{"event":"websocket:connected","token":"${secret}"`),
      connected({ 'content-type': `audio/${secret}` }),
      connected({ call_uuid: `${secret}/x` }),
      text({ event: 'websocket:dtmf', digit: secret }),
    ]) {
      expect(parseError(frame).message).not.toContain(secret);
    }
  });

  it('reads any binary frame as audio, and refuses a text frame that is not JSON', () => {
    // Vonage tells audio from control by frame type alone: a control message sent as binary is audio.
    const json = Buffer.from('{"event":"websocket:cleared"} ');
    expect(createVonageCodec().parse(json, true)).toMatchObject({ type: 'audio' });
    expect(parseError(Buffer.from([0, 1, 2, 3]), false).message).toMatch(/invalid JSON/);
  });
});

describe('parseContentType', () => {
  it('tolerates case and spaces', () => {
    expect(parseContentType('Audio/L16 ; Rate=8000')).toEqual({
      encoding: 'linear16',
      sampleRate: 8000,
      channels: 1,
    });
  });
});
