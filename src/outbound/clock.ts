// The dialer's clock: time is what the dialer is about (windows, pace, retry delays, leases), so it
// is injected; tests drive a fake one and every store step is given the time it should use.

export interface DialerClock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: DialerClock = {
  now: () => Date.now(),
  setTimeout: (run, ms) => {
    const timer = setTimeout(run, ms);
    // The dialer never keeps a process alive on its own: the server (or a test) does.
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
