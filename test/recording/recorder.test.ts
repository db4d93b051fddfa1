// The recorder on fake timers: the caller's frames exactly on the left, agent audio on the right
// from when it plays, a barge-in cutting what had not played, pauses as silence on both channels,
// gaps as silence, and writing that keeps up with the call so memory does not grow with it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { decodeMulaw } from '../../src/audio/codec.js';
import { realClock } from '../../src/call/clock.js';
import { CallRecorder } from '../../src/recording/recorder.js';
import { readStereoWav } from '../helpers/wav-stereo.js';
import { type MemoryUpload, memoryUpload } from './memory-upload.js';

const RATE = 8000;
const FRAME = 160; // 20 ms of μ-law 8 kHz

let upload: MemoryUpload;
/** The fake clock's time when the recorder started: times given to it are since then. */
let startedAt: number;
const at = () => performance.now() - startedAt;

/** μ-law bytes that decode to non-zero, distinct samples. */
function tone(bytes: number, seed: number): Buffer {
  return Buffer.from(Array.from({ length: bytes }, (_, i) => (seed * 37 + i * 11) % 0x7f));
}

function recorder(opts: { maxPendingBytes?: number; onFailed?: (reason: string) => void } = {}) {
  startedAt = performance.now();
  return new CallRecorder({ encoding: 'mulaw', sampleRate: RATE, upload, clock: realClock, ...opts });
}

/** Caller frames every 20 ms for `ms`, each arriving at its end. */
function callerSpeaks(rec: CallRecorder, ms: number, seed: number): Buffer[] {
  const frames: Buffer[] = [];
  for (let t = 0; t < ms; t += 20) {
    vi.advanceTimersByTime(20);
    const frame = tone(FRAME, seed + t);
    frames.push(frame);
    rec.callerFrame(frame, at());
  }
  return frames;
}

const silent = (samples: Int16Array) => samples.every((s) => s === 0);

beforeEach(() => {
  vi.useFakeTimers();
  upload = memoryUpload();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the two channels', () => {
  it('holds the caller frames, decoded, exactly and in order on the left', async () => {
    const rec = recorder();
    const frames = callerSpeaks(rec, 3000, 1);
    const summary = await rec.finish();
    const wav = readStereoWav(upload.file());
    expect(wav).toMatchObject({ sampleRate: RATE, channels: 2, bitsPerSample: 16 });
    expect([...wav.left]).toEqual([...decodeMulaw(Buffer.concat(frames))]);
    expect(silent(wav.right)).toBe(true);
    expect(summary).toEqual({ state: 'ready', durationMs: 3000, bytes: 44 + 3000 * 8 * 4, pauses: [] });
    expect(upload.ended).toBe(true);
    expect(wav.declaredDataBytes).toBe(3000 * 8 * 4);
  });

  it('holds 16-bit PCM caller frames exactly on the left and played PCM on the right', async () => {
    startedAt = performance.now();
    const rec = new CallRecorder({ encoding: 'linear16', sampleRate: 16000, upload, clock: realClock });
    // 20 ms at 16 kHz: 320 samples, little-endian, spanning the whole 16-bit range.
    const pcm = (seed: number) => {
      const bytes = Buffer.alloc(640);
      for (let i = 0; i < 320; i++) bytes.writeInt16LE(((seed * 7919 + i * 2053) % 65536) - 32768, i * 2);
      return bytes;
    };
    const frames: Buffer[] = [];
    for (let t = 0; t < 1000; t += 20) {
      vi.advanceTimersByTime(20);
      frames.push(pcm(t));
      rec.callerFrame(frames.at(-1)!, at());
    }
    const reply = pcm(99_999);
    rec.played(reply, at());
    vi.advanceTimersByTime(20);
    await rec.finish();
    const wav = readStereoWav(upload.file());
    const samples = (bytes: Buffer) =>
      Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));
    expect(wav).toMatchObject({ sampleRate: 16000, channels: 2, bitsPerSample: 16 });
    expect([...wav.left.subarray(0, 16000)]).toEqual(samples(Buffer.concat(frames)));
    expect([...wav.right.subarray(16000, 16320)]).toEqual(samples(reply));
    expect(silent(wav.right.subarray(0, 16000))).toBe(true);
  });

  it('places agent audio on the right from when it plays: after what the carrier already holds', async () => {
    const rec = recorder();
    callerSpeaks(rec, 500, 1);
    const first = tone(8000, 2); // one second
    const second = tone(4000, 3);
    rec.played(first, at()); // at 500 ms: plays 500–1500 ms
    callerSpeaks(rec, 200, 4);
    rec.played(second, 1500); // sent at 700 ms, queued behind the first: plays 1500–2000 ms
    callerSpeaks(rec, 2000, 5);
    await rec.finish();
    const { right } = readStereoWav(upload.file());
    expect(silent(right.subarray(0, 4000))).toBe(true);
    expect([...right.subarray(4000, 12000)]).toEqual([...decodeMulaw(first)]);
    expect([...right.subarray(12000, 16000)]).toEqual([...decodeMulaw(second)]);
    expect(silent(right.subarray(16000))).toBe(true);
  });

  it('leaves out what a barge-in kept from playing', async () => {
    const rec = recorder();
    const reply = tone(16000, 6); // two seconds, sent at once
    rec.played(reply, at());
    callerSpeaks(rec, 800, 7);
    rec.truncated(at()); // at 800 ms: the carrier drops the rest
    callerSpeaks(rec, 2000, 8);
    await rec.finish();
    const { right } = readStereoWav(upload.file());
    expect([...right.subarray(0, 6400)]).toEqual([...decodeMulaw(reply.subarray(0, 6400))]);
    expect(silent(right.subarray(6400))).toBe(true);
  });

  it('writes silence where the caller sent nothing, so later audio keeps its time', async () => {
    const rec = recorder();
    const before = callerSpeaks(rec, 1000, 9);
    vi.advanceTimersByTime(1000); // the carrier sent nothing for a second
    const after = callerSpeaks(rec, 1000, 10);
    await rec.finish();
    const { left } = readStereoWav(upload.file());
    expect([...left.subarray(0, 8000)]).toEqual([...decodeMulaw(Buffer.concat(before))]);
    expect(silent(left.subarray(8000, 16000))).toBe(true);
    expect([...left.subarray(16000, 24000)]).toEqual([...decodeMulaw(Buffer.concat(after))]);
  });
});

describe('pauses', () => {
  it('writes a pause as silence on both channels and lists it', async () => {
    const rec = recorder();
    rec.played(tone(8000 * 4, 11), at()); // the agent speaks for four seconds
    const first = callerSpeaks(rec, 1000, 12);
    expect(rec.pause()).toBe(true);
    expect(rec.pause()).toBe(false);
    expect(rec.state).toBe('paused');
    callerSpeaks(rec, 1500, 13);
    expect(rec.resume()).toBe(true);
    const last = callerSpeaks(rec, 1500, 14);
    const summary = await rec.finish();
    const { left, right } = readStereoWav(upload.file());
    expect([...left.subarray(0, 8000)]).toEqual([...decodeMulaw(Buffer.concat(first))]);
    expect(silent(left.subarray(8000, 20000))).toBe(true);
    expect(silent(right.subarray(8000, 20000))).toBe(true);
    expect(silent(right.subarray(0, 8000))).toBe(false);
    expect(silent(right.subarray(20000, 32000))).toBe(false);
    expect([...left.subarray(20000, 32000)]).toEqual([...decodeMulaw(Buffer.concat(last))]);
    expect(summary.pauses).toEqual([{ atMs: 1000, durationMs: 1500 }]);
  });

  it('closes a pause still running when the call ends', async () => {
    const rec = recorder();
    callerSpeaks(rec, 400, 15);
    rec.pause();
    callerSpeaks(rec, 600, 16);
    const summary = await rec.finish();
    expect(summary.pauses).toEqual([{ atMs: 400, durationMs: 600 }]);
    expect(silent(readStereoWav(upload.file()).left.subarray(3200))).toBe(true);
  });
});

describe('writing while the call runs', () => {
  it('writes behind the present every two seconds, so what it holds does not grow with the call', () => {
    const rec = recorder();
    for (let minute = 1; minute <= 5; minute++) {
      callerSpeaks(rec, 60_000, minute);
      const written = upload.file().length - 44;
      // At most the hold (0.5 s) and one write period (2 s) are not written yet.
      expect(written).toBeGreaterThanOrEqual((minute * 60_000 - 2500) * 8 * 4);
    }
    // The header already names the part written: a file cut here plays.
    const wav = readStereoWav(upload.file());
    expect(wav.declaredDataBytes).toBe(upload.file().length - 44);
  });

  it('gives up, without touching the call, when the store falls behind', async () => {
    const failures: string[] = [];
    const rec = recorder({ maxPendingBytes: 1000, onFailed: (reason) => failures.push(reason) });
    callerSpeaks(rec, 1000, 17);
    upload.backlog = 5000;
    callerSpeaks(rec, 2000, 18);
    expect(rec.state).toBe('failed');
    expect(failures).toEqual(['the store fell behind the call']);
    expect(upload.aborted).toBe(true);
    const summary = await rec.finish();
    expect(summary.state).toBe('failed');
    rec.callerFrame(tone(FRAME, 1), at()); // ignored, no throw
  });
});
