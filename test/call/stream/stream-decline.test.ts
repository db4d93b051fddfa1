// What a declined caller hears: the message in the carrier's own message sizes, padded with
// silence where the carrier wants whole messages, paced in real time, and all of it before the
// hang-up.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MULAW_8K } from '../../../src/audio/format.js';
import { declineMessages, playDecline } from '../../../src/call/stream/stream-decline.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const audio = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 200));
const LINEAR16_16K = { encoding: 'linear16' as const, sampleRate: 16000, channels: 1 };

describe('declineMessages', () => {
  it('cuts whole frames and pads the last with silence', () => {
    const messages = declineMessages(audio, { frameBytes: 160 }, MULAW_8K);
    expect(messages.map((m) => m.length)).toEqual([160, 160, 160, 160, 160, 160, 160]);
    expect(Buffer.concat(messages).subarray(0, 1000).equals(audio)).toBe(true);
    expect(
      Buffer.concat(messages)
        .subarray(1000)
        .every((b) => b === 0xff),
    ).toBe(true);
  });

  it('keeps to a carrier minimum (Exotel) and maximum (Vonage)', () => {
    const exotel = declineMessages(
      Buffer.alloc(5000, 1),
      { frameBytes: 320, minMessageBytes: 3200 },
      LINEAR16_16K,
    );
    expect(exotel.map((m) => m.length)).toEqual([3200, 3200]);
    expect(exotel[1]!.subarray(1800).every((b) => b === 0)).toBe(true);
    const vonage = declineMessages(
      Buffer.alloc(1280, 1),
      { frameBytes: 640, maxMessageBytes: 640 },
      LINEAR16_16K,
    );
    expect(vonage.map((m) => m.length)).toEqual([640, 640]);
  });
});

describe('playDecline', () => {
  it('sends the message paced in real time and resolves once it has had time to play', async () => {
    const sent: Array<{ atMs: number; bytes: number }> = [];
    let done = false;
    void playDecline({
      audio: Buffer.alloc(1600, 0x11),
      rules: { frameBytes: 160 },
      format: MULAW_8K,
      send: (payload) => {
        sent.push({ atMs: Date.now(), bytes: payload.length });
        return true;
      },
    }).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(100);
    // 200 ms of audio, never more than one message ahead of the clock.
    expect(sent.length).toBeGreaterThan(2);
    expect(sent.length).toBeLessThan(10);
    await vi.advanceTimersByTimeAsync(200);
    expect(sent).toHaveLength(10);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(600);
    expect(done).toBe(true);
  });

  it('stops sending once the stream is gone', async () => {
    let calls = 0;
    const played = playDecline({
      audio: Buffer.alloc(1600),
      rules: { frameBytes: 160 },
      format: MULAW_8K,
      send: () => ++calls < 3,
    });
    await vi.advanceTimersByTimeAsync(1_000);
    await played;
    expect(calls).toBe(3);
  });
});
