// G.711 and linear16 conversions, and the resampler between the telephone rates.
import { describe, expect, it } from 'vitest';
import {
  ALAW_SILENCE_BYTE,
  decodeAlaw,
  decodeAudio,
  decodeLinear16,
  decodeMulaw,
  encodeAlaw,
  encodeAudio,
  encodeLinear16,
  encodeMulaw,
  MULAW_SILENCE_BYTE,
  resample,
  transcode,
} from '../../src/audio/codec.js';

function tone(length: number, rate: number, hz = 440, amplitude = 10_000): Int16Array {
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

function maxRelativeError(a: Int16Array, b: Int16Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const err = Math.abs(a[i]! - b[i]!) / Math.max(256, Math.abs(a[i]!));
    worst = Math.max(worst, err);
  }
  return worst;
}

function zeroCrossings(samples: Int16Array): number {
  let count = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) count++;
  return count;
}

describe('G.711', () => {
  it('round-trips μ-law within its quantization step', () => {
    const samples = tone(800, 8000);
    const back = decodeMulaw(encodeMulaw(samples));
    expect(back).toHaveLength(samples.length);
    expect(maxRelativeError(samples, back)).toBeLessThan(0.07);
  });

  it('round-trips A-law within its quantization step', () => {
    const samples = tone(800, 8000);
    const back = decodeAlaw(encodeAlaw(samples));
    expect(maxRelativeError(samples, back)).toBeLessThan(0.07);
  });

  it('knows the silence bytes', () => {
    expect(decodeMulaw(Buffer.from([MULAW_SILENCE_BYTE]))[0]).toBe(0);
    expect(encodeMulaw(new Int16Array([0]))[0]).toBe(MULAW_SILENCE_BYTE);
    expect(Math.abs(decodeAlaw(Buffer.from([ALAW_SILENCE_BYTE]))[0]!)).toBeLessThanOrEqual(8);
    expect(encodeAlaw(new Int16Array([0]))[0]).toBe(ALAW_SILENCE_BYTE);
  });

  it('returns Buffers ready for ws.send', () => {
    expect(Buffer.isBuffer(encodeMulaw(new Int16Array(4)))).toBe(true);
    expect(Buffer.isBuffer(encodeAudio(new Int16Array(4), 'alaw'))).toBe(true);
  });
});

describe('linear16', () => {
  it('is little-endian', () => {
    expect([...encodeLinear16(new Int16Array([0x0102, -2]))]).toEqual([0x02, 0x01, 0xfe, 0xff]);
    expect([...decodeLinear16(Buffer.from([0x02, 0x01, 0xfe, 0xff]))]).toEqual([0x0102, -2]);
  });

  it('decodes a buffer at an odd offset and ignores a trailing odd byte', () => {
    const backing = Buffer.from([0x99, 0x34, 0x12, 0x78, 0x56, 0x01]);
    expect([...decodeLinear16(backing.subarray(1))]).toEqual([0x1234, 0x5678]);
  });

  it('round-trips exactly', () => {
    const samples = tone(320, 16000, 1000, 30_000);
    expect(decodeAudio(encodeAudio(samples, 'linear16'), 'linear16')).toEqual(samples);
  });
});

describe('resample', () => {
  it.each([
    [8000, 16000],
    [8000, 24000],
    [8000, 48000],
    [16000, 8000],
    [48000, 8000],
    [24000, 16000],
  ])('%i Hz to %i Hz keeps duration and pitch', (from, to) => {
    const input = tone(from / 2, from, 300);
    const out = resample(input, from, to);
    expect(out.length).toBe(to / 2);
    // 300 Hz for 0.5 s: 300 crossings either way.
    expect(Math.abs(zeroCrossings(out) - zeroCrossings(input))).toBeLessThanOrEqual(2);
  });

  it('returns the same samples when the rates match', () => {
    const input = tone(160, 8000);
    expect(resample(input, 8000, 8000)).toBe(input);
  });

  it('refuses rates outside 8/16/24/48 kHz', () => {
    expect(() => resample(new Int16Array(10), 8000, 44100)).toThrow(/unsupported sample rate 44100/);
  });

  it('transcodes μ-law 8 kHz to linear16 16 kHz and back', () => {
    const mulaw = encodeMulaw(tone(800, 8000));
    const pcm = transcode(
      mulaw,
      { encoding: 'mulaw', sampleRate: 8000 },
      { encoding: 'linear16', sampleRate: 16000 },
    );
    expect(pcm.length).toBe(mulaw.length * 4);
    const back = transcode(
      pcm,
      { encoding: 'linear16', sampleRate: 16000 },
      { encoding: 'mulaw', sampleRate: 8000 },
    );
    expect(back.equals(mulaw)).toBe(true);
  });
});
