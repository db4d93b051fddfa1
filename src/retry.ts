// The project's one retry policy. Whether a failure is worth another try is the error's own
// `retryable` field (typed errors in errors.ts, with HTTP statuses mapped once by `retryableStatus`);
// how long to wait before it is `backoffDelayMs`: exponential, capped, optionally jittered.
//
// Written here rather than taken from a retry library: three of the places that retry do not sleep
// in-process but hand the delay to the store as a due time (the webhook queue, the analysis jobs,
// a contact the carrier turned away), which a library built around a retried function cannot
// express; the two that do retry in-process (the campaign notifier, the agent dial) need only the
// delay too.

export interface Backoff {
  /** The wait after the first failure. */
  firstDelayMs: number;
  /** No wait is longer than this. */
  maxDelayMs: number;
}

/**
 * The wait after `failures` failed tries (1 for the first): first, 2×first, 4×first … capped.
 * With `random`, a full-range jitter of ±`jitter` (a fraction) spreads retries that failed together.
 */
export function backoffDelayMs(
  failures: number,
  backoff: Backoff,
  jitter?: { random: () => number; spread: number },
): number {
  const delay = Math.min(backoff.maxDelayMs, backoff.firstDelayMs * 2 ** Math.max(0, failures - 1));
  if (!jitter) return delay;
  return delay * (1 - jitter.spread + 2 * jitter.spread * jitter.random());
}

/**
 * The error's own word on whether the same request may work later; `unknown` for an error that
 * does not say (not one of ours), so each caller states what such an error means to it.
 */
export function retryableOf(err: unknown): boolean | 'unknown' {
  const value = (err as { retryable?: unknown } | null)?.retryable;
  return typeof value === 'boolean' ? value : 'unknown';
}

export type BackgroundOutcome =
  { ok: true; tries: number } | { ok: false; err: unknown; tries: number; permanent: boolean };

/**
 * Runs `work` in the background until it succeeds, fails for good (`retryable` false), or has had
 * `attempts` tries, waiting the backoff between tries on `schedule` (a clock's setTimeout). An error
 * that does not say whether it is retryable is tried again. Never throws; `done` hears the end.
 */
export function retryInBackground(
  work: () => Promise<void>,
  opts: {
    attempts: number;
    backoff: Backoff;
    schedule: (run: () => void, delayMs: number) => void;
    done: (outcome: BackgroundOutcome) => void;
  },
): void {
  const attempt = (tries: number) => {
    work().then(
      () => opts.done({ ok: true, tries }),
      (err: unknown) => {
        const permanent = retryableOf(err) === false;
        if (permanent || tries >= opts.attempts) opts.done({ ok: false, err, tries, permanent });
        else opts.schedule(() => attempt(tries + 1), backoffDelayMs(tries, opts.backoff));
      },
    );
  };
  attempt(1);
}
