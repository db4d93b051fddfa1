// The authentication-failure limiter (docs/protocols/webhook-providers.md sections 4 and 7): 20 failures from one IP
// within a minute and that IP is refused until the window passes. Only failures count. The count
// lives in the store, so every instance sees it. The IP is Fastify's `request.ip`, which honours
// X-Forwarded-For only from the proxies TRUST_PROXY names.
import type { Store } from '../store/store.js';

export const MAX_AUTH_FAILURES = 20;
export const AUTH_FAILURE_WINDOW_MS = 60_000;

export type LimiterState = { limited: false } | { limited: true; retryAfterMs: number };

export class AuthFailureLimiter {
  readonly #store: Store;
  readonly #now: () => number;

  constructor(store: Store, now: () => number) {
    this.#store = store;
    this.#now = now;
  }

  async check(ip: string): Promise<LimiterState> {
    const window = await this.#store.readWindowCounter(keyFor(ip));
    if (!window || window.count < MAX_AUTH_FAILURES) return { limited: false };
    return { limited: true, retryAfterMs: Math.max(0, window.resetAtMs - this.#now()) };
  }

  async recordFailure(ip: string): Promise<void> {
    await this.#store.incrementWindowCounter(keyFor(ip), AUTH_FAILURE_WINDOW_MS);
  }
}

function keyFor(ip: string): string {
  return `webhook-auth-failures:${ip}`;
}
