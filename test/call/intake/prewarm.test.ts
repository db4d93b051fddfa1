// Pre-dialed agent sessions: handed over once, closed when nobody claims them in time.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PrewarmPool } from '../../../src/call/intake/prewarm.js';

class FakeSession {
  closed = 0;
  close(): void {
    this.closed++;
  }
}

let expired: string[];
let pool: PrewarmPool<FakeSession>;

beforeEach(() => {
  vi.useFakeTimers();
  expired = [];
  pool = new PrewarmPool<FakeSession>({ onExpired: (callSid) => expired.push(callSid) });
});

afterEach(() => {
  pool.closeAll();
  vi.useRealTimers();
});

describe('PrewarmPool', () => {
  it('hands a session over once and does not close it afterwards', () => {
    const session = new FakeSession();
    pool.put('CA1', session, 5000);
    expect(pool.size).toBe(1);
    expect(pool.take('CA1')).toBe(session);
    expect(pool.take('CA1')).toBeUndefined();
    expect(pool.size).toBe(0);
    vi.advanceTimersByTime(10_000);
    expect(session.closed).toBe(0);
    expect(expired).toEqual([]);
  });

  it('gives nothing for an unknown CallSid', () => {
    expect(pool.take('CA-unknown')).toBeUndefined();
  });

  it('closes an unclaimed session after its TTL and reports it', () => {
    const orphan = new FakeSession();
    const claimed = new FakeSession();
    pool.put('CA1', orphan, 5000);
    pool.put('CA2', claimed, 5000);
    vi.advanceTimersByTime(4999);
    expect(orphan.closed).toBe(0);
    expect(pool.take('CA2')).toBe(claimed);
    vi.advanceTimersByTime(1);
    expect(orphan.closed).toBe(1);
    expect(expired).toEqual(['CA1']);
    expect(pool.size).toBe(0);
    expect(pool.take('CA1')).toBeUndefined();
    expect(claimed.closed).toBe(0);
  });

  it('closes the session a second put for the same CallSid replaces', () => {
    const first = new FakeSession();
    const second = new FakeSession();
    pool.put('CA1', first, 5000);
    pool.put('CA1', second, 5000);
    expect(first.closed).toBe(1);
    expect(pool.size).toBe(1);
    expect(pool.take('CA1')).toBe(second);
    vi.advanceTimersByTime(10_000);
    expect(second.closed).toBe(0);
    expect(expired).toEqual([]);
  });

  it('closeAll closes everything, clears the timers and survives a failing close', () => {
    const a = new FakeSession();
    const broken = {
      close: () => {
        throw new Error('socket already gone');
      },
    };
    const b = new FakeSession();
    const mixed = new PrewarmPool<{ close(): void }>();
    mixed.put('CA1', a, 5000);
    mixed.put('CA2', broken, 5000);
    mixed.put('CA3', b, 5000);
    mixed.closeAll();
    expect([a.closed, b.closed]).toEqual([1, 1]);
    expect(mixed.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
