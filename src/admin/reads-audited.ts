// Reads of a recording are audited (docs/security.md, "What each role may read"), but a player reads
// one file in many Range requests: one entry per key (or session) and recording per minute says who
// read what and when without one entry per seek. Every read of a live call's recording is its own
// entry: that is listening in.
import { credentialOf } from './open-streams.js';
import type { Principal } from './principal.js';

export const READ_AUDIT_WINDOW_MS = 60_000;
const MAX_REMEMBERED = 10_000;

export class ReadsAudited {
  /** Insertion order is expiry order: every entry lives the same window. */
  readonly #until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether this read gets an audit entry (and, if so, that the next ones within the window do not). */
  due(principal: Principal, target: string, live: boolean): boolean {
    if (live) return true;
    const now = this.now();
    for (const [key, until] of this.#until) {
      if (until > now && this.#until.size < MAX_REMEMBERED) break;
      this.#until.delete(key);
    }
    const key = `${credentialOf(principal)}\n${target}`;
    if ((this.#until.get(key) ?? 0) > now) return false;
    this.#until.set(key, now + READ_AUDIT_WINDOW_MS);
    return true;
  }
}
