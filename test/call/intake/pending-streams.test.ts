// The streams a drain waits for: each webhook answered here until its stream arrives or its token
// expires, whichever comes first.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PendingStreams } from '../../../src/call/intake/pending-streams.js';

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('PendingStreams', () => {
  it('is settled at once when nothing is awaited', async () => {
    await expect(new PendingStreams().whenNone()).resolves.toBeUndefined();
  });

  it('settles when the last awaited stream arrives', async () => {
    const pending = new PendingStreams();
    pending.expect('twilio:CA1', 30_000);
    pending.expect('twilio:CA2', 30_000);
    let settled = false;
    void pending.whenNone().then(() => {
      settled = true;
    });
    pending.settled('twilio:CA1');
    await Promise.resolve();
    expect(settled).toBe(false);
    pending.settled('twilio:CA2');
    await Promise.resolve();
    expect(settled).toBe(true);
    expect(pending.size).toBe(0);
  });

  it('stops waiting for a stream once its token has expired', async () => {
    const pending = new PendingStreams();
    pending.expect('twilio:CA1', 30_000);
    let settled = false;
    void pending.whenNone().then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
  });

  it('counts a retried webhook once, from its latest answer', async () => {
    const pending = new PendingStreams();
    pending.expect('twilio:CA1', 10_000);
    await vi.advanceTimersByTimeAsync(8_000);
    pending.expect('twilio:CA1', 10_000);
    expect(pending.size).toBe(1);
    await vi.advanceTimersByTimeAsync(8_000);
    expect(pending.size).toBe(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(pending.size).toBe(0);
  });

  it('ignores a stream it never awaited', () => {
    const pending = new PendingStreams();
    pending.expect('twilio:CA1', 10_000);
    pending.settled('twilio:CA9');
    expect(pending.size).toBe(1);
  });
});
