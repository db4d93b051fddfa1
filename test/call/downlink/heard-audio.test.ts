// Heard-audio tracking from carrier marks: a mark echo proves playback only when no clear came
// between sending the mark and its echo (docs/protocols/twilio.md section 5).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HeardAudioTracker, heardPrefix } from '../../../src/call/downlink/heard-audio.js';

/** μ-law 8 kHz: 8 bytes per ms, 160-byte frames of 20 ms. */
const BYTES_PER_MS = 8;
const FRAME = 160;
const TEXT = 'Your order shipped on Monday and should arrive by Thursday afternoon at the latest.';

let tracker: HeardAudioTracker;
let clock: number;

beforeEach(() => {
  vi.useFakeTimers();
  clock = 1000;
  tracker = new HeardAudioTracker({ bytesPerMs: BYTES_PER_MS, markEveryMs: 500, nowMs: () => clock });
});

afterEach(() => {
  tracker.dispose();
  vi.useRealTimers();
});

/** Sends `ms` of audio in 20 ms frames; returns the marks to send, with the frame index after which each goes. */
function sendAudio(ms: number): { name: string; afterFrame: number }[] {
  const marks: { name: string; afterFrame: number }[] = [];
  for (let i = 0; i < ms / 20; i++) {
    const mark = tracker.audioSent(FRAME);
    if (mark) marks.push({ name: mark, afterFrame: i });
  }
  return marks;
}

describe('HeardAudioTracker', () => {
  it('places a mark after every 500 ms of audio', () => {
    tracker.startReply(TEXT);
    const marks = sendAudio(2500);
    expect(marks.map((m) => m.afterFrame)).toEqual([24, 49, 74, 99, 124]);
    expect(new Set(marks.map((m) => m.name)).size).toBe(5);
  });

  it('counts a reply whose marks all echoed as fully heard', () => {
    tracker.startReply(TEXT);
    const marks = sendAudio(2300).map((m) => m.name);
    const end = tracker.endMark();
    for (const name of [...marks, end]) expect(tracker.markEchoed(name)).toBe(true);

    expect(tracker.replies()).toEqual([
      { text: TEXT, sentMs: 2300, heardMs: 2300, interrupted: false, heardText: TEXT, startedAtMs: 1000 },
    ]);
  });

  it('after a clear with 2 of 5 marks echoed: interrupted, heard 2 marks worth, a word-cut prefix', () => {
    tracker.startReply(TEXT);
    const marks = sendAudio(2500).map((m) => m.name);
    const end = tracker.endMark();
    tracker.markEchoed(marks[0]!);
    tracker.markEchoed(marks[1]!);
    tracker.cleared();

    const [reply] = tracker.replies();
    expect(reply).toMatchObject({ sentMs: 2500, heardMs: 1000, interrupted: true });
    // 1000 / 2500 of the text, cut back to the start of the word the cut fell in.
    expect(reply!.heardText).toBe('Your order shipped on Monday and');
    expect(TEXT.startsWith(reply!.heardText)).toBe(true);

    // The carrier flushes the pending marks right after the clear: those echoes prove nothing.
    for (const name of [...marks.slice(2), end]) expect(tracker.markEchoed(name)).toBe(false);
    expect(tracker.replies()[0]).toMatchObject({ heardMs: 1000, interrupted: true });
  });

  it('takes a later echo as confirming the earlier marks', () => {
    tracker.startReply(TEXT);
    const marks = sendAudio(1500).map((m) => m.name);
    tracker.markEchoed(marks[2]!);
    expect(tracker.replies()[0]!.heardMs).toBe(1500);
    expect(tracker.markEchoed(marks[0]!)).toBe(true);
    expect(tracker.replies()[0]!.heardMs).toBe(1500);
  });

  it('does not call a reply interrupted when the clear comes after it was all heard', () => {
    tracker.startReply('Goodbye.');
    sendAudio(300);
    tracker.markEchoed(tracker.endMark());
    tracker.cleared();
    expect(tracker.replies()[0]).toMatchObject({ heardMs: 300, interrupted: false, heardText: 'Goodbye.' });
  });

  it('keeps replies apart and takes text before or after the audio', () => {
    tracker.setReplyText('First reply.'); // text before audio
    tracker.startReply();
    sendAudio(200);
    tracker.markEchoed(tracker.endMark());

    tracker.startReply(); // text after audio
    sendAudio(400);
    tracker.setReplyText('Second reply.');
    tracker.markEchoed(tracker.endMark());

    tracker.setReplyText('Third reply.'); // the second has ended with text: this one is new
    tracker.startReply();
    sendAudio(100);
    tracker.cleared();

    expect(tracker.replies().map((r) => [r.text, r.sentMs, r.heardMs, r.interrupted, r.heardText])).toEqual([
      ['First reply.', 200, 200, false, 'First reply.'],
      ['Second reply.', 400, 400, false, 'Second reply.'],
      ['Third reply.', 100, 0, true, ''],
    ]);
  });

  it('opens a new reply for audio after a clear', () => {
    tracker.startReply('Interrupted one.');
    sendAudio(600);
    tracker.cleared();
    sendAudio(100);
    expect(tracker.replies()).toHaveLength(2);
    expect(tracker.replies()[1]).toMatchObject({ text: '', sentMs: 100, interrupted: false });
  });

  describe('waitForMark', () => {
    it('resolves played when the mark is echoed', async () => {
      tracker.startReply('Goodbye!');
      sendAudio(800);
      const end = tracker.endMark();
      const wait = tracker.waitForMark(end, 5000);
      vi.advanceTimersByTime(1000);
      tracker.markEchoed(end);
      await expect(wait).resolves.toBe('played');
      expect(vi.getTimerCount()).toBe(0);
    });

    it('resolves played at once for a mark echoed just before the wait', async () => {
      const end = tracker.endMark();
      tracker.markEchoed(end);
      await expect(tracker.waitForMark(end, 5000)).resolves.toBe('played');
    });

    it('resolves timeout when no echo comes in time', async () => {
      tracker.startReply('Goodbye!');
      sendAudio(800);
      const wait = tracker.waitForMark(tracker.endMark(), 5000);
      vi.advanceTimersByTime(4999);
      let settled = false;
      void wait.then(() => {
        settled = true;
      });
      await Promise.resolve();
      expect(settled).toBe(false);
      vi.advanceTimersByTime(1);
      await expect(wait).resolves.toBe('timeout');
    });

    it('is not settled by the echo a clear flushes out', async () => {
      tracker.startReply('Goodbye!');
      sendAudio(800);
      const end = tracker.endMark();
      const wait = tracker.waitForMark(end, 5000);
      tracker.cleared();
      expect(tracker.markEchoed(end)).toBe(false);
      vi.advanceTimersByTime(5000);
      await expect(wait).resolves.toBe('timeout');
    });

    it('settles every wait as timeout on dispose', async () => {
      const wait = tracker.waitForMark(tracker.endMark(), 60_000);
      tracker.dispose();
      await expect(wait).resolves.toBe('timeout');
      expect(vi.getTimerCount()).toBe(0);
    });
  });
});

describe('heardPrefix', () => {
  it('cuts back to a word boundary and is empty or whole at the ends', () => {
    expect(heardPrefix('Hello there friend', 0.5)).toBe('Hello');
    expect(heardPrefix('Hello there friend', 11 / 18)).toBe('Hello there');
    expect(heardPrefix('Hello there friend', 12 / 18)).toBe('Hello there');
    expect(heardPrefix('Hello there friend', 0.1)).toBe('');
    expect(heardPrefix('Hello there friend', 0)).toBe('');
    expect(heardPrefix('Hello there friend', 1)).toBe('Hello there friend');
  });
});
