// The recording's two channels held as the stream carries them: each placed at its positions,
// decoded and interleaved as the WAV lays them out when taken, the stream's silence where nothing
// was placed, a cut on one channel leaving the other, clipping behind the written part and beyond
// the bound ahead, and growth as audio is placed further ahead.
import { describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw } from '../../src/audio/codec.js';
import { LEFT, RIGHT, StereoBuffer } from '../../src/recording/stereo-buffer.js';

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const MULAW = decodeMulaw(ALL_BYTES);
const ALAW = decodeAlaw(ALL_BYTES);

/** Positions `[base, upTo)` taken out, split into the two channels. */
function take(buffer: StereoBuffer, upTo: number): { left: number[]; right: number[] } {
  const data = Buffer.alloc(4 * (upTo - buffer.base));
  buffer.take(upTo, new Int16Array(data.buffer, data.byteOffset, data.length / 2));
  // Read as the file holds it: little-endian.
  const samples = Array.from({ length: data.length / 2 }, (_, i) => data.readInt16LE(2 * i));
  return { left: samples.filter((_, i) => i % 2 === 0), right: samples.filter((_, i) => i % 2 === 1) };
}

/** Little-endian 16-bit PCM of `samples`. */
function linear16(samples: number[]): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, i) => bytes.writeInt16LE(sample, i * 2));
  return bytes;
}

describe('StereoBuffer', () => {
  it('decodes μ-law on both channels at their positions, zero where nothing was placed', () => {
    const buffer = new StereoBuffer('mulaw', MULAW, 1000);
    buffer.put(LEFT, 1, Uint8Array.from([0x00, 0x80]));
    buffer.put(RIGHT, 2, Uint8Array.from([0x7f, 0x10, 0x90]));
    expect(take(buffer, 6)).toEqual({
      left: [0, MULAW[0x00], MULAW[0x80], 0, 0, 0],
      right: [0, 0, MULAW[0x7f], MULAW[0x10], MULAW[0x90], 0],
    });
    expect(buffer.base).toBe(6);
    // The right channel is decoded only where it holds audio: a later stretch, placed mid-way.
    buffer.put(LEFT, 6, Uint8Array.from([0x01, 0x02, 0x03, 0x04]));
    buffer.put(RIGHT, 8, Uint8Array.from([0x20]));
    expect(take(buffer, 10)).toEqual({
      left: [MULAW[0x01], MULAW[0x02], MULAW[0x03], MULAW[0x04]],
      right: [0, 0, MULAW[0x20], 0],
    });
  });

  it("holds A-law's idle code where nothing was placed: A-law has no zero", () => {
    const buffer = new StereoBuffer('alaw', ALAW, 1000);
    buffer.put(LEFT, 0, Uint8Array.from([0x2a]));
    expect(take(buffer, 2)).toEqual({ left: [ALAW[0x2a], ALAW[0xd5]], right: [ALAW[0xd5], ALAW[0xd5]] });
    expect(Math.abs(ALAW[0xd5]!)).toBe(8);
  });

  it('moves 16-bit PCM samples exactly, across the whole range, and ignores an odd last byte', () => {
    const buffer = new StereoBuffer('linear16', null, 1000);
    buffer.put(LEFT, 0, linear16([-32768, 32767, -1]));
    buffer.put(RIGHT, 1, Buffer.concat([linear16([1234]), Buffer.from([0x55])]));
    expect(take(buffer, 4)).toEqual({ left: [-32768, 32767, -1, 0], right: [0, 1234, 0, 0] });
  });

  it('cuts one channel from a position on and leaves the other whole', () => {
    const buffer = new StereoBuffer('linear16', null, 1000);
    buffer.put(LEFT, 0, linear16([1, 2, 3, 4]));
    buffer.put(RIGHT, 0, linear16([5, 6, 7, 8]));
    buffer.cut(RIGHT, 2);
    expect(take(buffer, 4)).toEqual({ left: [1, 2, 3, 4], right: [5, 6, 0, 0] });
  });

  it('drops what is placed behind the taken part or beyond the bound ahead', () => {
    const buffer = new StereoBuffer('linear16', null, 4);
    take(buffer, 2);
    buffer.put(LEFT, 0, linear16([1, 2, 3, 4, 5, 6, 7, 8]));
    // Positions 0 and 1 are written already; 6 and later lie beyond base (2) + 4.
    expect(take(buffer, 7).left).toEqual([3, 4, 5, 6, 0]);
  });

  it('grows to hold audio placed far ahead, and takes it out in order across several takes', () => {
    const buffer = new StereoBuffer('linear16', null, 100_000, 4);
    const samples = Array.from({ length: 5000 }, (_, i) => (i % 2000) - 1000);
    buffer.put(RIGHT, 10, linear16(samples));
    const first = take(buffer, 2000);
    const second = take(buffer, 6000);
    expect([...first.right, ...second.right]).toEqual([
      ...Array(10).fill(0),
      ...samples,
      ...Array(990).fill(0),
    ]);
    expect([...first.left, ...second.left].every((s) => s === 0)).toBe(true);
  });
});
