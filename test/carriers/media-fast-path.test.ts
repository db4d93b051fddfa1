// The media fast paths read the payload of a frame they matched without encoding it again: they
// must accept and refuse exactly what the general path does. Checked on the decoder against the
// definition of strict base64 over every short text the fast paths can match and many random and
// damaged payloads, and on the Twilio codec frame by frame against its own general path.
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { createTwilioCodec } from '../../src/carriers/twilio/codec.js';
import { decodeMatchedBase64 } from '../../src/carriers/wire.js';

/** The definition: the only text that decodes to given bytes is the one those bytes encode to. */
function strict(text: string): Buffer | undefined {
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

/** Texts a fast path's `[^"\\]*` can capture. */
const MATCHABLE = /^[^"\\]*$/;

/** Texts on which the two disagree; one `expect` at the end keeps the sweep fast. */
let disagreements: string[] = [];

function agrees(text: string): void {
  if (!MATCHABLE.test(text)) return;
  const want = strict(text);
  const got = decodeMatchedBase64(text);
  const same = want === undefined ? got === undefined : got !== undefined && got.equals(want);
  if (!same) disagreements.push(text);
}

describe('the fast paths’ base64', () => {
  beforeEach(() => {
    disagreements = [];
  });

  it('agrees with strict base64 on every matchable text of up to four characters of a tricky alphabet', () => {
    // Each letter range's edges, the digits, both symbols, padding, the URL-safe alphabet's two
    // symbols, and characters of neither (ASCII, Latin-1, beyond).
    const alphabet = [
      'A',
      'B',
      'P',
      'Q',
      'Z',
      'a',
      'g',
      'w',
      'z',
      '0',
      '9',
      '+',
      '/',
      '=',
      '-',
      '_',
      ' ',
      '*',
      '\t',
      'é',
      'Ā',
    ];
    let texts = [''];
    for (let length = 1; length <= 4; length++) {
      texts = texts.flatMap((t) => alphabet.map((c) => t + c));
      for (const text of texts) agrees(text);
    }
    expect(disagreements).toEqual([]);
  });

  it('agrees on random payloads of every frame size, whole and damaged', () => {
    for (let i = 0; i < 400; i++) {
      const text = randomBytes(i % 200).toString('base64');
      agrees(text);
      agrees(text.slice(0, -1));
      agrees(text.slice(0, -2));
      agrees(`${text}=`);
      agrees(`${text}==`);
      agrees(`${text}A`);
      for (const bad of ['-', '_', ' ', 'é', '.']) {
        const at = Math.floor(text.length / 2);
        agrees(`${text.slice(0, at)}${bad}${text.slice(at + 1)}`);
      }
      if (text.endsWith('=')) {
        // The same length with the pad bits set: not canonical.
        const at = text.indexOf('=') - 1;
        agrees(`${text.slice(0, at)}/${text.slice(at + 1)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('the Twilio media fast path against the general path', () => {
  const start = JSON.stringify({
    event: 'start',
    start: {
      callSid: 'CA1',
      streamSid: 'MZ1',
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
  const started = () => {
    const codec = createTwilioCodec();
    codec.parse(Buffer.from(start), false);
    return codec;
  };
  /** The outcome of a parse: the event, or the error's message. */
  const outcome = (frame: string): unknown => {
    try {
      return started().parse(Buffer.from(frame), false);
    } catch (err) {
      return (err as Error).message;
    }
  };
  const fast = (payload: string) =>
    `{"event":"media","sequenceNumber":"4","media":{"track":"inbound","chunk":"2","timestamp":"5","payload":"${payload}"},"streamSid":"MZ1"}`;
  // A space after the brace keeps the frame off the fast path: JSON.parse reads it.
  const general = (payload: string) => `{ ${fast(payload).slice(1)}`;

  it.each([
    ['a whole frame', randomBytes(160).toString('base64')],
    ['an empty payload', ''],
    ['one padding character', 'QUI='],
    ['two padding characters', 'QQ=='],
    ['non-zero pad bits under one pad', 'QUJ='],
    ['non-zero pad bits under two pads', 'QR=='],
    ['a length that is not a multiple of 4', 'QUJDR'],
    ['missing padding', 'QUI'],
    ['padding only', '=='],
    ['three characters and a pad short', 'QQ='],
  ])('reads %s as the general path does', (_name, payload) => {
    expect(outcome(fast(payload))).toEqual(outcome(general(payload)));
  });

  it('reads malformed frames of nearly the fast shape through the general path, never crashing', () => {
    const payload = randomBytes(160).toString('base64');
    const frames = [
      fast(payload).replace('"inbound"', '"outbound"'),
      fast(payload).replace('"4"', '4'),
      fast(payload).replace('"payload":"', '"payload":"\\u0041'),
      fast(payload).slice(0, -1),
      fast(`${payload}"`),
      fast(payload.replace(/.$/, '-')),
      `${fast(payload)} `,
      fast(payload).replace('"media":{', '"media":{"x":1,'),
    ];
    for (const frame of frames) {
      const result = outcome(frame);
      expect(result === undefined).toBe(false);
      if (typeof result === 'string') expect(result).toMatch(/^twilio /);
    }
  });
});
