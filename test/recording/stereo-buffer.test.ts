// The recording's two channels as the WAV lays them out: samples placed per channel at their
// positions, silence where nothing was placed, a cut on one channel leaving the other, clipping
// behind the written part and beyond the bound ahead, and growth as audio is placed further ahead.
import { describe, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { LEFT, RIGHT, StereoBuffer } from '../../src/recording/stereo-buffer.js';

const MULAW = decodeMulaw(Uint8Array.from({ length: 256 }, (_, i) => i));

/** Positions `[base, upTo)` taken out, split into the two channels. */
function take(buffer: StereoBuffer, upTo: number): { left: number[]; right: number[] } {
  const frames = new Int16Array(2 * (upTo - buffer.base));
  buffer.take(upTo, frames);
  return {
    left: Array.from(frames.filter((_, i) => i % 2 === 0)),
    right: Array.from(frames.filter((_, i) => i % 2 === 1)),
  };
}

/** Little-endian 16-bit PCM of `samples`. */
function linear16(samples: number[]): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  samples.forEach((sample, i) => bytes.writeInt16LE(sample, i * 2));
  return bytes;
}

describe('StereoBuffer', () => {
  it('interleaves G.711 on the left and PCM on the right, silence where nothing was placed', () => {
    const buffer = new StereoBuffer(1000);
    buffer.putBytes(LEFT, 1, Uint8Array.from([0x00, 0x80]), MULAW);
    buffer.putLinear16(RIGHT, 2, linear16([-32768, 32767, -1]));
    expect(take(buffer, 6)).toEqual({
      left: [0, MULAW[0x00], MULAW[0x80], 0, 0, 0],
      right: [0, 0, -32768, 32767, -1, 0],
    });
    expect(buffer.base).toBe(6);
  });

  it('ignores the odd last byte of PCM', () => {
    const buffer = new StereoBuffer(1000);
    buffer.putLinear16(LEFT, 0, Buffer.from([0x01, 0x02, 0x03]));
    expect(take(buffer, 2).left).toEqual([0x0201, 0]);
  });

  it('cuts one channel from a position on and leaves the other whole', () => {
    const buffer = new StereoBuffer(1000);
    buffer.putLinear16(LEFT, 0, linear16([1, 2, 3, 4]));
    buffer.putLinear16(RIGHT, 0, linear16([5, 6, 7, 8]));
    buffer.cut(RIGHT, 2);
    expect(take(buffer, 4)).toEqual({ left: [1, 2, 3, 4], right: [5, 6, 0, 0] });
  });

  it('drops what is placed behind the taken part or beyond the bound ahead', () => {
    const buffer = new StereoBuffer(4);
    take(buffer, 2);
    buffer.putLinear16(LEFT, 0, linear16([1, 2, 3, 4, 5, 6, 7, 8]));
    // Positions 0 and 1 are written already; 6 and later lie beyond base (2) + 4.
    expect(take(buffer, 7).left).toEqual([3, 4, 5, 6, 0]);
  });

  it('grows to hold audio placed far ahead, and takes it out in order across several takes', () => {
    const buffer = new StereoBuffer(100_000, 4);
    const samples = Array.from({ length: 5000 }, (_, i) => (i % 2000) - 1000);
    buffer.putLinear16(RIGHT, 10, linear16(samples));
    const first = take(buffer, 2000);
    const second = take(buffer, 6000);
    expect([...first.right, ...second.right]).toEqual([...Array(10).fill(0), ...samples, ...Array(990).fill(0)]);
    expect([...first.left, ...second.left].every((s) => s === 0)).toBe(true);
  });
});
