// The downlink on fake timers with a recording leg: framing to each carrier's rules (any size,
// exactly one frame, a minimum with padding), pacing ahead of real time, marks, and the states
// that replace the old booleans (idle, replying, muted, closed).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MediaFormat } from '../../../src/audio/format.js';
import type { DownlinkRules } from '../../../src/call/carrier-port.js';
import { realClock } from '../../../src/call/clock.js';
import { Downlink, type DownlinkTap, MAX_PACED_MS } from '../../../src/call/downlink/downlink.js';
import { type FakeLeg, fakeLeg } from '../../helpers/call-fakes.js';

const MULAW_8K: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 };
const L16_16K: MediaFormat = { encoding: 'linear16', sampleRate: 16000, channels: 1 };
const L16_8K: MediaFormat = { encoding: 'linear16', sampleRate: 8000, channels: 1 };

const TWILIO: DownlinkRules = { frameBytes: 160 };
const VONAGE: DownlinkRules = { frameBytes: 640, maxMessageBytes: 640, paceAheadMs: 1000 };
const EXOTEL: DownlinkRules = { frameBytes: 320, minMessageBytes: 3200, maxMessageBytes: 100_000 };

let leg: FakeLeg;
let counts: { downFrames: number; downBytes: number };
/** When each audio message reached the leg, by the (fake) clock. */
let sentAt: number[];

function downlink(rules: DownlinkRules, format: MediaFormat = MULAW_8K) {
  const d = new Downlink({ leg, rules, format, clock: realClock, counts, markEveryMs: 500 });
  return d;
}

const bytes = (n: number, fill = 0x11) => Buffer.alloc(n, fill);
const sizes = () => leg.commands.flatMap((c) => (c.kind === 'audio' ? [c.bytes.length] : []));
const kinds = () => leg.commands.map((c) => c.kind);

beforeEach(() => {
  vi.useFakeTimers();
  leg = fakeLeg();
  const send = leg.sendAudio;
  sentAt = [];
  leg.sendAudio = (payload) => {
    sentAt.push(performance.now());
    send(payload);
  };
  counts = { downFrames: 0, downBytes: 0 };
});

afterEach(() => {
  vi.useRealTimers();
});

describe('framing for a carrier that takes any size', () => {
  it('passes whole frames at once, holds the rest, and sends the tail as is when the reply ends', () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    const chunks = [bytes(100, 1), bytes(333, 2), bytes(1000, 3), bytes(7, 4)];
    expect(chunks.map((c) => d.audio(c))).toEqual([0, 320, 960, 160]);
    d.replyDone();
    expect(sizes()).toEqual([320, 960, 160]);
    expect(leg.audio().equals(Buffer.concat(chunks))).toBe(true);
    expect(kinds().at(-1)).toBe('mark');
    expect(counts).toEqual({ downFrames: 3, downBytes: 1440 });

    d.audio(bytes(50));
    d.replyDone();
    expect(sizes().at(-1)).toBe(50); // no byte added where the carrier takes any size
  });
});

describe('framing for Vonage: exactly one 20 ms frame per message, paced', () => {
  it('sends every message as one 640-byte frame and pads the last with silence', async () => {
    const d = downlink(VONAGE, L16_16K);
    d.replyStarted();
    d.audio(bytes(640 * 3 + 100, 0x22));
    d.replyDone();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sizes()).toEqual([640, 640, 640, 640]);
    const last = leg.commands.filter((c) => c.kind === 'audio').at(-1)!;
    if (last.kind !== 'audio') throw new Error('unreachable');
    expect(last.bytes.subarray(0, 100).every((b) => b === 0x22)).toBe(true);
    expect(last.bytes.subarray(100).every((b) => b === 0)).toBe(true);
  });

  it('keeps no more than paceAheadMs of audio ahead of real time, and the marks behind their audio', async () => {
    // Invariant: a long reply never floods the carrier's bounded buffer (Vonage: 3,072 messages).
    const d = downlink(VONAGE, L16_16K);
    d.replyStarted();
    d.audio(bytes(32 * 10_000)); // ten seconds, sent by the agent in one go
    d.replyDone();
    expect(sizes().length).toBeLessThanOrEqual(51);
    expect(d.isPlaying()).toBe(true);
    expect(d.pendingMs()).toBeCloseTo(10_000, 0);

    await vi.advanceTimersByTimeAsync(12_000);
    expect(sizes()).toHaveLength(500);
    // Replay the carrier's buffer: at each send, what it holds stays within the pace.
    let endsAt = 0;
    for (const at of sentAt) {
      endsAt = Math.max(endsAt, at) + 20;
      expect(endsAt - at).toBeLessThanOrEqual(1000 + 20);
    }
    // Progress marks every 500 ms of audio, each right after the audio it follows; the end mark last.
    const marks = leg.commands.flatMap((c, i) => (c.kind === 'mark' ? [i] : []));
    expect(marks).toHaveLength(21);
    expect(leg.commands.at(-1)).toMatchObject({ kind: 'mark' });
    expect(leg.marks().at(-1)).toMatch(/-end$/);
    const audioBefore = (i: number) => leg.commands.slice(0, i).filter((c) => c.kind === 'audio').length;
    expect(audioBefore(marks[0]!)).toBe(25);
  });

  it('empties the pacing queue on a barge-in and sends nothing more of the reply', async () => {
    const d = downlink(VONAGE, L16_16K);
    d.replyStarted();
    d.audio(bytes(32 * 5_000));
    await vi.advanceTimersByTimeAsync(500);
    const before = sizes().length;
    expect(d.bargeIn()).toBe(true);
    expect(kinds().at(-1)).toBe('clear');
    expect(d.isPlaying()).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(sizes()).toHaveLength(before);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('framing for Exotel: multiples of 320 bytes between 3,200 and 100,000', () => {
  it('holds audio until a message reaches the minimum, and pads the tail up to it', () => {
    const d = downlink(EXOTEL, L16_8K);
    d.replyStarted();
    expect(d.audio(bytes(1000))).toBe(0);
    expect(d.audio(bytes(1000))).toBe(0);
    expect(d.audio(bytes(1500))).toBe(3200);
    d.audio(bytes(700));
    d.replyDone();
    expect(sizes()).toEqual([3200, 3200]);
    const tail = leg.commands.filter((c) => c.kind === 'audio').at(-1)!;
    if (tail.kind !== 'audio') throw new Error('unreachable');
    expect(tail.bytes.subarray(0, 1000).every((b) => b === 0x11)).toBe(true);
    expect(tail.bytes.subarray(1000).every((b) => b === 0)).toBe(true);
  });

  it('splits a large chunk into even pieces that each stay within the bounds', () => {
    const d = downlink(EXOTEL, L16_8K);
    d.audio(bytes(320 * 314)); // 100,480 bytes: just over the maximum
    expect(sizes()).toEqual([50_240, 50_240]);
    d.audio(bytes(320 * 700)); // 224,000 bytes: three pieces
    for (const size of sizes()) {
      expect(size % 320).toBe(0);
      expect(size).toBeGreaterThanOrEqual(3200);
      expect(size).toBeLessThanOrEqual(100_000);
    }
    expect(sizes()).toEqual([50_240, 50_240, 74_880, 74_560, 74_560]);
  });

  it('pads the fallback message too', () => {
    const d = downlink(EXOTEL, L16_8K);
    d.play(bytes(1234));
    expect(sizes()).toEqual([3200]);
  });
});

describe('states', () => {
  it('mutes after a barge-in until the next reply starts', () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    expect(d.state).toBe('replying');
    d.audio(bytes(800));
    d.audio(bytes(80)); // a partial frame held
    expect(d.bargeIn()).toBe(true);
    expect(d.state).toBe('muted');
    expect(d.audio(bytes(800))).toBe(0);
    d.replyDone(); // the interrupted reply's end: no tail, no mark
    expect(kinds()).toEqual(['audio', 'clear']);
    d.replyStarted();
    expect(d.state).toBe('replying');
    expect(d.audio(bytes(160, 5))).toBe(160);
    d.replyDone();
    expect(d.state).toBe('idle');
  });

  it('counts a barge-in as an interruption only while the caller hears the agent', async () => {
    const d = downlink(TWILIO);
    expect(d.bargeIn()).toBe(false);
    d.replyStarted();
    d.audio(bytes(1600)); // 200 ms
    await vi.advanceTimersByTimeAsync(150);
    expect(d.bargeIn()).toBe(true);
    d.replyStarted();
    d.audio(bytes(1600));
    await vi.advanceTimersByTimeAsync(250);
    expect(d.bargeIn()).toBe(false);
  });

  it('unmutes when the agent goes away, so the next agent is heard', () => {
    const d = downlink(TWILIO);
    d.bargeIn();
    d.audio(bytes(80));
    d.reset();
    expect(d.state).toBe('idle');
    expect(d.audio(bytes(160))).toBe(160);
  });

  it('sends nothing once closed and settles every wait', async () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    const started = d.waitForReply('done', 10_000);
    const heard = d.untilHeard(10_000);
    d.close();
    expect(await started).toBe(false);
    expect(await heard).toBe('timeout');
    expect(d.audio(bytes(1600))).toBe(0);
    d.replyStarted();
    d.replyDone();
    expect(d.bargeIn()).toBe(false);
    expect(d.state).toBe('closed');
  });

  it('refuses rules no carrier could mean', () => {
    expect(() => downlink({ frameBytes: 0 })).toThrow(RangeError);
    expect(() => downlink({ frameBytes: 160, maxMessageBytes: 100 })).toThrow(RangeError);
    expect(() => downlink({ frameBytes: 320, minMessageBytes: 3200, maxMessageBytes: 3000 })).toThrow(
      RangeError,
    );
    expect(() => downlink({ frameBytes: 160, paceAheadMs: 0 })).toThrow(RangeError);
  });
});

describe('what the caller heard', () => {
  it('marks progress, and counts a reply heard up to the last mark echoed before a clear', async () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    d.replyText('One two three four five six seven eight nine ten');
    d.audio(bytes(4000)); // a progress mark after each 500 ms
    d.audio(bytes(4000));
    expect(leg.marks()).toHaveLength(2);
    d.markPlayed(leg.marks()[0]!);
    d.bargeIn();
    const [reply] = d.replies();
    expect(reply).toMatchObject({ sentMs: 1000, heardMs: 500, interrupted: true });
    expect(reply!.heardText).toBe('One two three four five');
  });

  it('resolves the last words once their end mark is echoed', async () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    d.audio(bytes(1600));
    let done = false;
    const words = d.lastWordsHeard(15_000).then(() => (done = true));
    d.replyDone();
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(false);
    leg.echoMarks((name) => d.markPlayed(name));
    await words;
    expect(done).toBe(true);
  });

  it('gives up waiting for the last words at the cap', async () => {
    const d = downlink(TWILIO);
    d.replyStarted();
    let done = false;
    void d.lastWordsHeard(3_000).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(2_999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(done).toBe(true);
  });
});

describe('the pacing queue is bounded', () => {
  it('cuts a reply longer than the bound at a frame, counts what was dropped, and sends the next reply whole', async () => {
    // Invariant: a paced carrier's queue never holds more than MAX_PACED_MS of agent audio, however
    // long and however fast the agent's reply comes.
    let dropped = 0;
    const d = new Downlink({
      leg,
      rules: VONAGE,
      format: L16_16K,
      clock: realClock,
      counts,
      onPacedDropped: (n) => (dropped += n),
    });
    const bytesPerMs = 32; // 16-bit PCM at 16 kHz
    const boundBytes = MAX_PACED_MS * bytesPerMs;
    d.replyStarted();
    // Five seconds past the bound, sent at once as an agent does; then a tail after the cut.
    for (let i = 0; i < (MAX_PACED_MS + 5_000) / 1_000; i++) d.audio(bytes(1_000 * bytesPerMs, 0x22));
    d.audio(bytes(640, 0x33));
    // Held: the bound, plus what the pace already let through to the carrier.
    expect(d.pendingMs()).toBeLessThanOrEqual(MAX_PACED_MS + VONAGE.paceAheadMs!);
    d.replyDone();
    await vi.advanceTimersByTimeAsync(MAX_PACED_MS + 2_000);
    // What the caller got is the reply's start, whole and unbroken, then its end mark; the rest
    // (the tail after the cut included) was dropped and counted.
    const sent = leg.audio();
    expect(sent.length).toBeGreaterThanOrEqual(boundBytes);
    expect(sent.length).toBeLessThanOrEqual(boundBytes + VONAGE.paceAheadMs! * bytesPerMs + 640);
    expect(sent.every((b) => b === 0x22)).toBe(true);
    expect(sent.length + dropped).toBe((MAX_PACED_MS + 5_000) * bytesPerMs + 640);
    expect(kinds().at(-1)).toBe('mark');
    const boundSent = sent.length;

    d.replyStarted();
    d.audio(bytes(640 * 2, 0x44));
    d.replyDone();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(leg.audio().subarray(boundSent).equals(bytes(1280, 0x44))).toBe(true);
  });

  it("does not bound the bridge's own audio, which is one buffer already in memory", async () => {
    let dropped = 0;
    const d = new Downlink({
      leg,
      rules: VONAGE,
      format: L16_16K,
      clock: realClock,
      counts,
      onPacedDropped: (n) => (dropped += n),
    });
    const voicemail = bytes((MAX_PACED_MS + 10_000) * 32, 0x55);
    d.play(voicemail);
    await vi.advanceTimersByTimeAsync(MAX_PACED_MS + 11_000);
    expect(dropped).toBe(0);
    expect(leg.audio().equals(voicemail)).toBe(true);
  });
});

describe('the tap for a listener on the call audio', () => {
  it('tells each message sent with the time it starts to play, and the barge-in that truncates it', async () => {
    const d = downlink(TWILIO);
    const told: Array<[string, number, number]> = [];
    const tap: DownlinkTap = {
      played: (audio, atMs) => told.push(['played', audio.length, atMs]),
      truncated: (atMs) => told.push(['truncated', 0, atMs]),
    };
    const t0 = performance.now();
    d.tap(tap);
    d.replyStarted();
    d.audio(bytes(800)); // 100 ms
    d.audio(bytes(800)); // queued behind it
    await vi.advanceTimersByTimeAsync(150);
    d.bargeIn();
    d.tap(null);
    d.replyStarted();
    d.audio(bytes(160));
    expect(told).toEqual([
      ['played', 800, t0],
      ['played', 800, t0 + 100],
      ['truncated', 0, t0 + 150],
    ]);
  });
});
