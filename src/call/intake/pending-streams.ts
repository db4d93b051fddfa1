// Calls this instance prepared (it answered their webhook) whose media stream has not arrived
// yet. A drain waits for them as for live calls (docs/architecture.md section 8): the carrier was
// told to open the stream here, and it may still come until the stream token expires.

export class PendingStreams {
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();
  #waiters: Array<() => void> = [];

  get size(): number {
    return this.#timers.size;
  }

  /** A webhook was answered for `key`; its stream may come for `ttlMs` (the token's lifetime). */
  expect(key: string, ttlMs: number): void {
    clearTimeout(this.#timers.get(key));
    const timer = setTimeout(() => this.settled(key), Math.max(0, ttlMs));
    timer.unref?.();
    this.#timers.set(key, timer);
  }

  /** The stream for `key` arrived (here or, as another instance reports, there), or never will. */
  settled(key: string): void {
    const timer = this.#timers.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#timers.delete(key);
    if (this.#timers.size === 0) {
      const waiters = this.#waiters;
      this.#waiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once no stream is awaited. */
  whenNone(): Promise<void> {
    if (this.#timers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  clear(): void {
    for (const key of [...this.#timers.keys()]) this.settled(key);
  }
}
