// The gateway benchmark's search for the sustained rate: the highest rate of signed webhooks a
// target answers in full with a p99 under the goal, found in bounded time. Rates double from the
// first until a step fails; the gap between the last rate held and the first that failed is then
// halved while it is wider than a tenth of the rate held and the time budget allows; the best rate
// is finally held for longer, and counts as sustained only if that holds too (else the next best
// held rate is reported, unconfirmed).
import type { LatencySummary } from './samples.js';

export interface SearchStep {
  offeredPerSecond: number;
  failed: number;
  latencyMs: LatencySummary;
}

export interface SearchOptions {
  firstRate: number;
  maxRate: number;
  p99GoalMs: number;
  stepMs: number;
  /** How long the best rate is held at the end. */
  holdMs: number;
  /** The search, hold included, stops starting steps past this. */
  budgetMs: number;
}

export interface SustainedRate {
  /** The highest rate held under the goal, confirmed by the longer hold when `confirmed`; 0 when none was. */
  ratePerSecond: number;
  confirmed: boolean;
  /** The longer hold at the best rate, when there was time for it. */
  hold: SearchStep | null;
  /** Why the search stopped: it narrowed to a tenth, reached --max-rate, or ran out of its budget. */
  stoppedBy: 'converged' | 'max-rate' | 'budget';
  spentS: number;
}

/** A step holds when every request was answered 2xx with p99 under the goal. */
export const held = (step: SearchStep, goalMs: number) =>
  step.failed === 0 && step.latencyMs.p99 !== null && step.latencyMs.p99 < goalMs;

/** Runs the search; `runStep` offers one rate for a duration and says what came back. */
export async function searchSustainedRate<S extends SearchStep>(
  opts: SearchOptions,
  runStep: (rate: number, durationMs: number) => Promise<S>,
  onStep: (step: S) => void,
  nowMs: () => number = () => performance.now(),
): Promise<SustainedRate> {
  const startedAt = nowMs();
  const spent = () => nowMs() - startedAt;
  const fits = (durationMs: number) => spent() + durationMs <= opts.budgetMs;
  const heldRates: number[] = [];
  let failedAt: number | null = null;
  let stoppedBy: SustainedRate['stoppedBy'] = 'max-rate';

  const tryRate = async (rate: number) => {
    const step = await runStep(rate, opts.stepMs);
    onStep(step);
    if (held(step, opts.p99GoalMs)) heldRates.push(rate);
    else failedAt = failedAt === null ? rate : Math.min(failedAt, rate);
    return held(step, opts.p99GoalMs);
  };
  const best = () => (heldRates.length === 0 ? 0 : Math.max(...heldRates));

  for (let rate = opts.firstRate; rate <= opts.maxRate; rate *= 2) {
    if (!fits(opts.stepMs)) {
      stoppedBy = 'budget';
      break;
    }
    if (!(await tryRate(rate))) {
      stoppedBy = 'converged';
      break;
    }
  }
  // Narrow the gap between the best rate held and the lowest that failed.
  while (stoppedBy === 'converged' && failedAt !== null && best() > 0) {
    const low = best();
    const high: number = failedAt;
    if (high - low <= low / 10) break;
    if (!fits(opts.stepMs)) {
      stoppedBy = 'budget';
      break;
    }
    await tryRate(Math.round((low + high) / 2));
  }

  let hold: SearchStep | null = null;
  let ratePerSecond = best();
  let confirmed = false;
  if (ratePerSecond > 0 && fits(opts.holdMs)) {
    hold = await runStep(ratePerSecond, opts.holdMs);
    confirmed = held(hold, opts.p99GoalMs);
    if (!confirmed) ratePerSecond = Math.max(0, ...heldRates.filter((rate) => rate < ratePerSecond));
  } else if (ratePerSecond > 0) {
    stoppedBy = 'budget';
  }
  return { ratePerSecond, confirmed, hold, stoppedBy, spentS: Math.round(spent() / 100) / 10 };
}
