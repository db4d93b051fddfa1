// Caller-silence limits on fake timers: frames arrive every 20 ms of fake time, as on a phone leg.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  decodeMulaw,
  encodeAlaw,
  encodeLinear16,
  encodeMulaw,
  MULAW_SILENCE_BYTE,
} from '../../../src/audio/codec.js';
import { SilenceMonitor, type SilenceMonitorOptions } from '../../../src/call/session/silence.js';

function tone(samples: number, amplitude = 8000): Int16Array {
  const out = new Int16Array(samples);
  for (let i = 0; i < samples; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 440 * i) / 8000));
  return out;
}

const SILENCE = Buffer.alloc(160, MULAW_SILENCE_BYTE);
const SPEECH = encodeMulaw(tone(160));

let monitor: SilenceMonitor;
let events: string[];
let speechEnds: number[];
let t0: number;

function start(overrides: Partial<SilenceMonitorOptions> = {}): void {
  monitor = new SilenceMonitor({
    silencePromptMs: 5000,
    silenceHangupMs: 10_000,
    onPrompt: () => events.push(`prompt@${Date.now() - t0}`),
    onHangup: () => events.push(`hangup@${Date.now() - t0}`),
    onSpeechEnd: (atMs) => speechEnds.push(atMs - t0),
    nowMs: () => Date.now(),
    ...overrides,
  });
}

/** Each frame arrives at the end of the 20 ms it covers. */
function feed(frame: Uint8Array, ms: number): void {
  for (let i = 0; i < ms / 20; i++) {
    vi.advanceTimersByTime(20);
    monitor.callerAudio(frame);
  }
}

beforeEach(() => {
  vi.useFakeTimers();
  t0 = Date.now();
  events = [];
  speechEnds = [];
});

afterEach(() => {
  monitor.dispose();
  vi.useRealTimers();
});

describe('SilenceMonitor', () => {
  it('prompts once after silencePromptMs, then hangs up after silenceHangupMs', () => {
    start();
    feed(SILENCE, 4980);
    expect(events).toEqual([]);
    feed(SILENCE, 20);
    expect(events).toEqual(['prompt@5000']);
    feed(SILENCE, 4980);
    expect(events).toEqual(['prompt@5000']);
    feed(SILENCE, 20);
    expect(events).toEqual(['prompt@5000', 'hangup@10000']);
    feed(SILENCE, 30_000);
    expect(events).toHaveLength(2);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('counts silence while no frames arrive at all', () => {
    start();
    vi.advanceTimersByTime(10_000);
    expect(events).toEqual(['prompt@5000', 'hangup@10000']);
  });

  it('restarts the count from the end of caller speech, and prompts again after it', () => {
    start();
    feed(SILENCE, 4000);
    feed(SPEECH, 500); // the 225th frame, ending at 4500 ms, is the last voiced one
    expect(monitor.callerSpeaking).toBe(true);
    feed(SILENCE, 4980);
    // The detector waits out its hangover, but the end it reports is the last voiced frame's.
    expect(speechEnds).toEqual([4500]);
    expect(events).toEqual([]);
    feed(SILENCE, 20);
    expect(events).toEqual(['prompt@9500']);

    feed(SPEECH, 200);
    feed(SILENCE, 5000);
    expect(events).toEqual(['prompt@9500', 'prompt@14700']);
    expect(speechEnds).toEqual([4500, 9700]);
  });

  it('does not count silence while the caller is speaking', () => {
    start();
    feed(SPEECH, 12_000);
    expect(events).toEqual([]);
    expect(monitor.silenceMs).toBe(0);
  });

  it('pauses the clock while the agent speaks, and the prompt does not restart the count', () => {
    start();
    feed(SILENCE, 3000);
    monitor.agentSpeaking(true);
    feed(SILENCE, 20_000);
    expect(events).toEqual([]);
    expect(monitor.silenceMs).toBe(3000);
    monitor.agentSpeaking(false);
    feed(SILENCE, 2000);
    expect(events).toEqual(['prompt@25000']);

    // The check-in prompt is spoken: paused again, then the count goes on towards hang-up.
    monitor.agentSpeaking(true);
    feed(SILENCE, 4000);
    monitor.agentSpeaking(false);
    feed(SILENCE, 5000);
    expect(events).toEqual(['prompt@25000', 'hangup@34000']);
  });

  it('lets caller speech during agent speech reset the count', () => {
    start();
    feed(SILENCE, 4000);
    monitor.agentSpeaking(true);
    feed(SPEECH, 200);
    feed(SILENCE, 400);
    monitor.agentSpeaking(false);
    expect(monitor.silenceMs).toBeLessThan(1000);
    feed(SILENCE, 4000);
    expect(events).toEqual([]);
  });

  it('with silencePromptMs 0 only hangs up', () => {
    start({ silencePromptMs: 0 });
    feed(SILENCE, 10_000);
    expect(events).toEqual(['hangup@10000']);
  });

  it('with silenceHangupMs 0 only prompts', () => {
    start({ silenceHangupMs: 0 });
    feed(SILENCE, 60_000);
    expect(events).toEqual(['prompt@5000']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('with both 0 sets no timer at all', () => {
    start({ silencePromptMs: 0, silenceHangupMs: 0 });
    expect(vi.getTimerCount()).toBe(0);
    feed(SILENCE, 60_000);
    expect(events).toEqual([]);
  });

  it('hangs up without prompting when both limits fall due together', () => {
    start({ silencePromptMs: 10_000, silenceHangupMs: 10_000 });
    feed(SILENCE, 10_000);
    expect(events).toEqual(['hangup@10000']);
  });

  it('stops on dispose', () => {
    start();
    feed(SILENCE, 1000);
    monitor.dispose();
    expect(vi.getTimerCount()).toBe(0);
    feed(SILENCE, 20_000);
    expect(events).toEqual([]);
  });

  it('runs on an injected clock and timer', () => {
    let now = 0;
    const timers: { at: number; fn: () => void }[] = [];
    start({
      nowMs: () => now,
      setTimer: (fn, delayMs) => {
        const entry = { at: now + delayMs, fn };
        timers.push(entry);
        return () => timers.splice(timers.indexOf(entry), 1);
      },
      onPrompt: () => events.push(`prompt@${now}`),
      onHangup: () => events.push(`hangup@${now}`),
    });
    const runUntil = (ms: number) => {
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > ms) break;
        timers.shift();
        now = next.at;
        next.fn();
      }
      now = ms;
    };
    runUntil(12_000);
    expect(events).toEqual(['prompt@5000', 'hangup@10000']);
  });

  it.each([
    ['linear16', encodeLinear16(tone(160)), encodeLinear16(new Int16Array(160))],
    ['alaw', encodeAlaw(tone(160)), encodeAlaw(new Int16Array(160))],
  ] as const)(
    'detects %s speech delivered in chunks that split frames and samples',
    (encoding, speech, silence) => {
      start({ encoding });
      const stream = Buffer.concat([...Array(25).fill(speech), ...Array(25).fill(silence)]);
      for (let i = 0; i < stream.length; i += 333) {
        vi.advanceTimersByTime(10);
        monitor.callerAudio(stream.subarray(i, i + 333));
      }
      expect(speechEnds).toHaveLength(1);
    },
  );

  it('reads linear16 as little-endian across odd chunk splits', () => {
    // A quiet tone stays under the detector's threshold only if every byte pair is read the right way round.
    start({ encoding: 'linear16' });
    const quiet = encodeLinear16(tone(160 * 50, 300));
    for (let i = 0; i < quiet.length; i += 333) monitor.callerAudio(quiet.subarray(i, i + 333));
    expect(monitor.callerSpeaking).toBe(false);
  });

  it('judges whole G.711 frames exactly as it judges the same samples decoded, around the threshold', () => {
    // Tones from just under to just over the detector's RMS threshold (500): the frame path stops
    // summing once a frame is voiced, and must still reach the same decision on every frame.
    const decisions = new Set<boolean>();
    for (let amplitude = 640; amplitude <= 780; amplitude += 4) {
      const frames = encodeMulaw(tone(160 * 5, amplitude));
      start();
      for (let i = 0; i < frames.length; i += 160) monitor.callerAudio(frames.subarray(i, i + 160));
      const byFrame = monitor.callerSpeaking;
      monitor.dispose();
      start();
      monitor.callerSamples(decodeMulaw(frames));
      expect(byFrame, `amplitude ${amplitude}`).toBe(monitor.callerSpeaking);
      decisions.add(byFrame);
      monitor.dispose();
    }
    expect([...decisions].sort()).toEqual([false, true]);
  });

  it('takes already-decoded samples', () => {
    start();
    for (let i = 0; i < 10; i++) monitor.callerSamples(tone(160));
    expect(monitor.callerSpeaking).toBe(true);
  });
});
