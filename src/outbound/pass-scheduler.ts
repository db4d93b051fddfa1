// When the dialer passes over its campaigns: one pass at a time, the next at the time the last one
// asked for, or at once when woken. A wake that comes during a pass runs another right after it
// (`passing_woken`), so a slot freed mid-pass is never left until the next poll.
import type { DialerClock } from './clock.js';

/** The loop's states and the moves between them; nothing else decides when a pass runs. */
const LOOP = Object.freeze({
  stopped: { start: 'waiting' },
  waiting: { timer: 'passing', stop: 'stopped' },
  passing: { wake: 'passing_woken', done: 'waiting', stop: 'stopped' },
  passing_woken: { done: 'waiting', stop: 'stopped' },
} as const);
type LoopState = keyof typeof LOOP;

export class PassScheduler {
  private state: LoopState = 'stopped';
  private timer: unknown = null;
  private timerAtMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: DialerClock,
    /** One pass; resolves (never rejects) to how long to wait before the next. */
    private readonly pass: () => Promise<number>,
    /** Registers the work of a pass, so the dialer's `idle()` waits for it and its next timer. */
    private readonly track: (work: Promise<void>) => Promise<void>,
  ) {}

  get running(): boolean {
    return this.state !== 'stopped';
  }

  start(): void {
    if (this.state !== 'stopped') return;
    this.state = LOOP.stopped.start;
    this.arm(0);
  }

  stop(): void {
    this.state = 'stopped';
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAtMs = Number.POSITIVE_INFINITY;
  }

  wake(): void {
    if (this.state === 'waiting') this.arm(0);
    else if (this.state === 'passing') this.state = LOOP.passing.wake;
  }

  /** Sets the timer for the next pass, unless one is already set sooner. */
  private arm(delayMs: number): void {
    const at = this.clock.now() + delayMs;
    if (this.timer !== null && this.timerAtMs <= at) return;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timerAtMs = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerAtMs = Number.POSITIVE_INFINITY;
      void this.track(this.onTimer());
    }, delayMs);
  }

  private async onTimer(): Promise<void> {
    if (this.state !== 'waiting') return;
    this.state = LOOP.waiting.timer;
    const nextMs = await this.pass();
    // A stop or a wake may have come during the pass.
    const state = this.state as LoopState;
    if (state === 'stopped') return;
    this.state = LOOP[state as 'passing' | 'passing_woken'].done;
    this.arm(state === 'passing_woken' ? 0 : nextMs);
  }
}

/** A chore done at most once per `everyMs` of the dialer's clock (heartbeat, reconciliation, gauges). */
export class Every {
  private nextAtMs = 0;

  constructor(private readonly everyMs: number) {}

  due(nowMs: number): boolean {
    if (nowMs < this.nextAtMs) return false;
    this.nextAtMs = nowMs + this.everyMs;
    return true;
  }
}
