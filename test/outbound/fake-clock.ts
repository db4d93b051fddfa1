// A clock the test moves. Timers run in time order, those due at one instant together (so two
// dialers on one clock really race), and after each step the test's `settle` waits for the work
// they started, store round trips included: time only moves once everything due has happened.
import type { DialerClock } from '../../src/outbound/clock.js';

interface Timer {
  at: number;
  run: () => unknown;
}

const MAX_STEPS = 200_000;

export class FakeClock implements DialerClock {
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;

  constructor(public nowMs: number) {}

  now = (): number => this.nowMs;

  setTimeout = (run: () => void, ms: number): unknown => {
    const id = this.nextId++;
    this.timers.set(id, { at: this.nowMs + Math.max(0, ms), run });
    return id;
  };

  clearTimeout = (handle: unknown): void => {
    this.timers.delete(handle as number);
  };

  async advanceTo(untilMs: number, settle: () => Promise<void>): Promise<void> {
    for (let step = 0; step < MAX_STEPS; step++) {
      await settle();
      let at = Number.POSITIVE_INFINITY;
      for (const timer of this.timers.values()) at = Math.min(at, timer.at);
      if (at > untilMs) {
        this.nowMs = Math.max(this.nowMs, untilMs);
        await settle();
        return;
      }
      this.nowMs = Math.max(this.nowMs, at);
      const due = [...this.timers].filter(([, timer]) => timer.at <= this.nowMs);
      for (const [id] of due) this.timers.delete(id);
      await Promise.all(due.map(([, timer]) => timer.run()));
    }
    throw new Error(`the fake clock ran ${MAX_STEPS} steps without reaching ${untilMs}`);
  }

  advance(ms: number, settle: () => Promise<void>): Promise<void> {
    return this.advanceTo(this.nowMs + ms, settle);
  }
}
