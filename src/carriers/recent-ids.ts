// A bounded memory of ids seen lately (webhook nonces, call ids), so a repeated delivery is noticed.
// Entries expire after `ttlMs`; past `maxEntries` the oldest are forgotten first. One instance's
// memory only: a repeat sent to another instance is not seen here.

export class RecentIds {
  /** Insertion order is expiry order: every entry lives exactly `ttlMs`. */
  private readonly expiresAt = new Map<string, number>();

  constructor(private readonly opts: { ttlMs: number; maxEntries: number; now: () => number }) {}

  /** Records `id`; true when it was already recorded and has not expired. */
  seen(id: string): boolean {
    const now = this.opts.now();
    this.prune(now);
    const expiry = this.expiresAt.get(id);
    if (expiry !== undefined && expiry > now) return true;
    this.expiresAt.delete(id);
    this.expiresAt.set(id, now + this.opts.ttlMs);
    if (this.expiresAt.size > this.opts.maxEntries) {
      const oldest = this.expiresAt.keys().next().value;
      if (oldest !== undefined) this.expiresAt.delete(oldest);
    }
    return false;
  }

  /** Forgets `id`, so it is new again (what it guarded did not happen after all). */
  forget(id: string): void {
    this.expiresAt.delete(id);
  }

  get size(): number {
    return this.expiresAt.size;
  }

  private prune(now: number): void {
    for (const [id, expiry] of this.expiresAt) {
      if (expiry > now) break;
      this.expiresAt.delete(id);
    }
  }
}
