// The energy speech detector on generated tones, silence and line noise.
import { describe, expect, it } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { rmsEnergy, SpeechDetector, type SpeechEdge, samplesPerFrame } from '../../src/audio/energy.js';

const FRAME = samplesPerFrame(8000);

function toneFrame(amplitude = 8000, hz = 440): Int16Array {
  const out = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / 8000));
  return out;
}

const silenceFrame = () => decodeMulaw(Buffer.alloc(FRAME, 0xff));

/** Deterministic low-level noise (a small LCG), like the hiss of a quiet line. */
function noiseFrame(seed: number, amplitude = 150): Int16Array {
  let state = seed;
  const out = new Int16Array(FRAME);
  for (let i = 0; i < FRAME; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    out[i] = Math.round((state / 2 ** 31 - 0.5) * 2 * amplitude);
  }
  return out;
}

function edges(detector: SpeechDetector, frames: Int16Array[]): { edge: SpeechEdge; at: number }[] {
  return frames.flatMap((frame, at) => {
    const edge = detector.push(frame);
    return edge ? [{ edge, at }] : [];
  });
}

describe('rmsEnergy', () => {
  it('is 0 for μ-law silence and amplitude/√2 for a sine', () => {
    expect(rmsEnergy(silenceFrame())).toBe(0);
    expect(rmsEnergy(toneFrame(8000))).toBeCloseTo(8000 / Math.SQRT2, -1);
    expect(rmsEnergy(new Int16Array(0))).toBe(0);
  });

  it('sizes 20 ms frames per rate', () => {
    expect([8000, 16000, 24000, 48000].map(samplesPerFrame)).toEqual([160, 320, 480, 960]);
  });
});

describe('SpeechDetector', () => {
  it('finds speech in a tone after the onset frames, and its end after the hangover', () => {
    const detector = new SpeechDetector();
    const frames = [
      ...Array.from({ length: 5 }, silenceFrame),
      ...Array.from({ length: 20 }, () => toneFrame()),
      ...Array.from({ length: 20 }, silenceFrame),
    ];
    expect(edges(detector, frames)).toEqual([
      { edge: 'start', at: 5 + detector.onsetFrames - 1 },
      { edge: 'end', at: 25 + detector.hangoverFrames },
    ]);
  });

  it('never triggers on silence or line noise', () => {
    const detector = new SpeechDetector();
    const frames = Array.from({ length: 200 }, (_, i) => (i % 2 ? silenceFrame() : noiseFrame(i + 1)));
    expect(edges(detector, frames)).toEqual([]);
  });

  it('ignores a click shorter than the onset', () => {
    const detector = new SpeechDetector();
    const frames = [toneFrame(20_000), silenceFrame(), toneFrame(20_000), toneFrame(20_000), silenceFrame()];
    expect(edges(detector, frames)).toEqual([]);
    expect(detector.speaking).toBe(false);
  });

  it('bridges the gaps between words', () => {
    const detector = new SpeechDetector({ hangoverFrames: 5 });
    const word = Array.from({ length: 10 }, () => toneFrame());
    const gap = Array.from({ length: 4 }, silenceFrame);
    expect(edges(detector, [...word, ...gap, ...word]).map((e) => e.edge)).toEqual(['start']);
    expect(detector.speaking).toBe(true);
  });
});

describe('SpeechDetector.pushRms', () => {
  it('decides exactly as push does on the same frames', () => {
    const a = new SpeechDetector();
    const b = new SpeechDetector();
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let n = 0; n < 500; n++) {
      const loud = Math.floor(n / 25) % 2 === 0;
      const frame = Int16Array.from({ length: 160 }, () => ((next() % 2000) - 1000) * (loud ? 4 : 0.1));
      expect(b.pushRms(rmsEnergy(frame))).toBe(a.push(frame));
    }
  });
});
