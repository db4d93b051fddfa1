// Time as a dependency: the call session and its parts read the time and set timers only through
// a Clock, so tests drive a whole call on fake timers instead of waiting on the wall clock.

export type ClockTimer = ReturnType<typeof setTimeout>;

export interface Clock {
  /** Monotonic milliseconds (the origin is arbitrary: only differences mean anything). */
  now(): number;
  /** Runs `callback` once after `delayMs`. The timer never keeps the process alive. */
  setTimeout(callback: () => void, delayMs: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

/**
 * The process clock. It looks the globals up on every call rather than keeping references, so
 * `vi.useFakeTimers()` installed after import still drives it.
 */
export const realClock: Clock = Object.freeze({
  now: () => performance.now(),
  setTimeout(callback: () => void, delayMs: number): ClockTimer {
    const timer = setTimeout(callback, delayMs);
    timer.unref?.();
    return timer;
  },
  clearTimeout: (timer: ClockTimer) => clearTimeout(timer),
});

/** Resolves after `delayMs` on `clock`. */
export function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, delayMs));
}
