// The call's audio to its listeners: times since the call's start, the downlink's tap on only while
// someone listens, a listener that throws removed and the others still told.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { AudioFanout } from '../../../src/call/watch/audio-fanout.js';
import type { CallAudioListener } from '../../../src/call/audio-listener.js';
import type { DownlinkTap } from '../../../src/call/downlink/downlink.js';

function heard(): CallAudioListener & { events: string[] } {
  const events: string[] = [];
  return {
    events,
    callerFrame: (payload, atMs) => events.push(`caller ${payload.length}@${atMs}`),
    played: (payload, atMs) => events.push(`played ${payload.length}@${atMs}`),
    truncated: (atMs) => events.push(`truncated@${atMs}`),
  };
}

function fanout() {
  const taps: Array<DownlinkTap | null> = [];
  const audio = new AudioFanout((tap) => taps.push(tap), 1_000, pino({ level: 'silent' }));
  return { audio, taps, tap: () => taps.at(-1) ?? null };
}

describe('audio fan-out', () => {
  it('puts the tap on with the first listener and tells each event at its time since the start', () => {
    const { audio, tap } = fanout();
    expect(audio.listening).toBe(false);
    const first = heard();
    const second = heard();
    audio.add(first);
    audio.add(second);
    expect(audio.listening).toBe(true);
    audio.callerFrame(Buffer.alloc(160), 1_020);
    tap()!.played(Buffer.alloc(320), 1_040);
    tap()!.truncated(1_050);
    const expected = ['caller 160@20', 'played 320@40', 'truncated@50'];
    expect(first.events).toEqual(expected);
    expect(second.events).toEqual(expected);
  });

  it('removes a listener that throws, tells the others, and takes the tap off with the last', () => {
    const { audio, taps, tap } = fanout();
    const kept = heard();
    const broken: CallAudioListener = {
      callerFrame: () => {
        throw new Error('disk full');
      },
      played: () => {},
      truncated: () => {},
    };
    audio.add(broken);
    const removeKept = audio.add(kept);
    audio.callerFrame(Buffer.alloc(160), 1_000);
    audio.callerFrame(Buffer.alloc(160), 1_020);
    expect(kept.events).toEqual(['caller 160@0', 'caller 160@20']);
    removeKept();
    expect(audio.listening).toBe(false);
    expect(tap()).toBeNull();
    expect(taps.filter((t) => t !== null)).toHaveLength(1);
  });

  it('hears nothing more once closed', () => {
    const { audio, tap } = fanout();
    const listener = heard();
    audio.add(listener);
    const downlinkTap = tap()!;
    audio.close();
    expect(tap()).toBeNull();
    downlinkTap.played(Buffer.alloc(160), 1_100);
    expect(listener.events).toEqual([]);
  });
});
