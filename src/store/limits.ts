// The bounds both store adapters keep, so that state shared by a fleet for years stays finite and
// single-use claims hold whatever the instances' clocks say.

/**
 * How far apart two instances' clocks may be while a single-use claim still holds. A stream token's
 * expiry is stamped by the instance that issued it and checked against the clock of whichever
 * instance receives the stream, while its single-use claim lives in the store: should the
 * receiver's clock lag the issuer's, the token stays valid there that much longer, and a claim that
 * lapsed exactly at the token's validity could be taken a second time. So every claim stands for the
 * validity it is given plus this allowance. Hosts kept by NTP agree within milliseconds; five
 * minutes covers a host whose time sync has been broken for weeks (a free-running clock drifts
 * seconds a day) and costs one short key kept five minutes longer per call.
 */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

export interface StoreLimits {
  /** Added to the validity of every single-use claim (see CLOCK_SKEW_ALLOWANCE_MS). */
  clockSkewAllowanceMs: number;
  /**
   * Events the queue holds at once, waiting, delayed or in flight. Past it, enqueueing is refused
   * (QueueFullError), so the webhook gateway answers 503 and the provider retries later, rather
   * than the queue growing without end while nothing drains it.
   */
  maxQueuedEvents: number;
  /** How long a dead letter is kept; older ones are dropped. */
  deadLetterRetentionMs: number;
  /** Dead letters kept at most; past it the oldest are dropped. */
  maxDeadLetters: number;
}

export const DEFAULT_STORE_LIMITS: StoreLimits = {
  clockSkewAllowanceMs: CLOCK_SKEW_ALLOWANCE_MS,
  maxQueuedEvents: 50_000,
  deadLetterRetentionMs: 30 * 24 * 60 * 60_000,
  maxDeadLetters: 10_000,
};

export function storeLimits(overrides: Partial<StoreLimits> = {}): StoreLimits {
  return { ...DEFAULT_STORE_LIMITS, ...overrides };
}
