// How many calls this instance admits. The ceiling is MAX_CALLS; each 429 from the agent (too
// many concurrent sessions, docs/protocols/agent.md section 12) lowers the admitted concurrency below what
// is live now, and it climbs back one call at a time while no refusal comes. New calls beyond
// the limit are declined at the voice webhook, before they cost an agent session.

export interface AdmissionOptions {
  maxCalls: number;
  /** How often the limit climbs back by one after a refusal. */
  recoverEveryMs: number;
  nowMs?: () => number;
  onChange?: (limit: number) => void;
}

export class AdmissionControl {
  private limit: number;
  private lastChangeMs = 0;
  private readonly now: () => number;

  constructor(private readonly opts: AdmissionOptions) {
    this.limit = opts.maxCalls;
    this.now = opts.nowMs ?? Date.now;
  }

  /** The limit now, after any recovery due since the last refusal. */
  current(): number {
    if (this.limit < this.opts.maxCalls) {
      const steps = Math.floor((this.now() - this.lastChangeMs) / this.opts.recoverEveryMs);
      if (steps > 0) this.set(Math.min(this.opts.maxCalls, this.limit + steps));
    }
    return this.limit;
  }

  admits(liveCalls: number): boolean {
    return liveCalls < this.current();
  }

  /** The agent refused a session while `liveCalls` were up: admit fewer for a while. */
  refused(liveCalls: number): void {
    this.set(Math.max(1, Math.min(this.current(), Math.floor(liveCalls * 0.9))));
  }

  private set(limit: number): void {
    this.lastChangeMs = this.now();
    if (limit === this.limit) return;
    this.limit = limit;
    this.opts.onChange?.(limit);
  }
}
