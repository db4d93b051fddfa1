import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFrameClock } from '../../../src/sim/carrier/frame-clock.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A wall clock that runs ahead of the fake timers by `lag`: timers that fire late. */
function lateClock() {
  const state = { lag: 0 };
  return { state, now: (): number => Date.now() + state.lag };
}

describe('startFrameClock', () => {
  it('keeps frames on the absolute 20 ms grid however long each frame takes to handle', () => {
    vi.useFakeTimers({ now: 0 });
    const { state, now } = lateClock();
    const startedAt: number[] = [];
    const clock = startFrameClock(
      20,
      () => {
        startedAt.push(now());
        // Handling a frame takes 7 ms: chained 20 ms delays would drift to a 27 ms period.
        state.lag += 7;
      },
      now,
    );
    vi.advanceTimersByTime(1000);
    clock.stop();
    expect(startedAt.length).toBeGreaterThanOrEqual(45);
    startedAt.forEach((at, n) => {
      expect(at).toBeGreaterThanOrEqual(n * 20);
      expect(at).toBeLessThan(n * 20 + 20);
    });
  });

  it('catches up on frames it fell behind on, in order, then stops when told', () => {
    vi.useFakeTimers({ now: 0 });
    const { state, now } = lateClock();
    const indexes: number[] = [];
    const clock = startFrameClock(20, (index) => indexes.push(index), now);
    expect(indexes).toEqual([0]);
    // The event loop was blocked for 100 ms: the next timer fires that late.
    state.lag = 100;
    vi.advanceTimersByTime(20);
    expect(indexes).toEqual([0, 1, 2, 3, 4, 5, 6]);
    clock.stop();
    vi.advanceTimersByTime(200);
    expect(indexes).toHaveLength(7);
  });
});
