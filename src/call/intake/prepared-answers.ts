// The answers given to calls' verified announcements, kept while their stream token is good, so a
// repeated announcement (a replayed signed webhook, or the carrier's own retry) gets the same answer
// (the same stream token, media URL and observer token) and nothing new: no second token, observer
// token or pre-warmed agent (docs/security.md, "Replayed requests"). One instance's memory; the
// shared store's claim (intake.ts) refuses a repeat anywhere else.
import type { PreparedCall } from '../carrier-port.js';

const MAX_REMEMBERED = 20_000;

export class PreparedAnswers {
  /** Insertion order is expiry order: every answer is kept the same time. */
  readonly #answers = new Map<string, { answer: Promise<PreparedCall>; untilMs: number }>();

  constructor(
    private readonly keepMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The answer already given to this call, or `prepare`'s, given once. */
  once(carrier: string, callSid: string, prepare: () => Promise<PreparedCall>): Promise<PreparedCall> {
    const nowMs = this.now();
    for (const [key, kept] of this.#answers) {
      if (kept.untilMs > nowMs && this.#answers.size < MAX_REMEMBERED) break;
      this.#answers.delete(key);
    }
    const key = `${carrier}\n${callSid}`;
    const kept = this.#answers.get(key);
    if (kept) return kept.answer;
    const answer = prepare();
    this.#answers.set(key, { answer, untilMs: nowMs + this.keepMs });
    // Only answers are kept: a refusal or a failure (the store unreachable) is decided again.
    answer.catch(() => {
      if (this.#answers.get(key)?.answer === answer) this.#answers.delete(key);
    });
    return answer;
  }
}
