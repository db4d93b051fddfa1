// The gateway benchmark's search for the sustained rate, against a target whose capacity is known:
// doubling until a step fails, halving the gap down to a tenth, holding the best rate longer, and
// never starting a step past its time budget.
import { describe, expect, it } from 'vitest';
import { type SearchOptions, type SearchStep, searchSustainedRate } from '../../src/bench/gateway-search.js';

const OPTIONS: SearchOptions = {
  firstRate: 100,
  maxRate: 3_200,
  p99GoalMs: 50,
  stepMs: 1_000,
  holdMs: 2_000,
  budgetMs: 60_000,
};

/** A target that keeps its p99 under the goal up to `capacity` a second (and, when holding longer, up to `holdCapacity`). */
function target(capacity: number, holdCapacity = capacity) {
  const offered: Array<[rate: number, durationMs: number]> = [];
  const runStep = async (rate: number, durationMs: number): Promise<SearchStep> => {
    offered.push([rate, durationMs]);
    const limit = durationMs > OPTIONS.stepMs ? holdCapacity : capacity;
    const p99 = rate <= limit ? 10 : 200;
    return { offeredPerSecond: rate, failed: 0, latencyMs: { count: rate, p50: 1, p99, max: p99 } };
  };
  return { offered, runStep };
}

describe('the sustained-rate search', () => {
  it('doubles, then narrows the gap to a tenth of the rate held, then holds the best rate', async () => {
    const { offered, runStep } = target(1_000);
    const steps: SearchStep[] = [];
    const result = await searchSustainedRate(OPTIONS, runStep, (step) => steps.push(step));
    expect(steps.map((s) => s.offeredPerSecond)).toEqual([100, 200, 400, 800, 1_600, 1_200, 1_000, 1_100]);
    expect(result).toMatchObject({ ratePerSecond: 1_000, confirmed: true, stoppedBy: 'converged' });
    expect(offered.at(-1)).toEqual([1_000, OPTIONS.holdMs]);
  });

  it('falls back to the next rate held when the longer hold fails', async () => {
    const { runStep } = target(1_000, 900);
    const result = await searchSustainedRate(OPTIONS, runStep, () => {});
    expect(result).toMatchObject({ ratePerSecond: 800, confirmed: false });
    expect(result.hold?.offeredPerSecond).toBe(1_000);
  });

  it('stops at --max-rate with every step held', async () => {
    const { runStep } = target(10_000);
    const steps: SearchStep[] = [];
    const result = await searchSustainedRate({ ...OPTIONS, maxRate: 400 }, runStep, (s) => steps.push(s));
    expect(steps.map((s) => s.offeredPerSecond)).toEqual([100, 200, 400]);
    expect(result).toMatchObject({ ratePerSecond: 400, confirmed: true, stoppedBy: 'max-rate' });
  });

  it('reports no rate when the first one fails, and tries nothing lower', async () => {
    const { offered, runStep } = target(50);
    const result = await searchSustainedRate(OPTIONS, runStep, () => {});
    expect(offered).toEqual([[100, OPTIONS.stepMs]]);
    expect(result).toMatchObject({ ratePerSecond: 0, confirmed: false, hold: null });
  });

  it('starts no step that would end past its budget', async () => {
    let nowMs = 0;
    const { runStep } = target(1_000);
    const clocked = async (rate: number, durationMs: number) => {
      nowMs += durationMs;
      return runStep(rate, durationMs);
    };
    const result = await searchSustainedRate(
      { ...OPTIONS, budgetMs: 3_500 },
      clocked,
      () => {},
      () => nowMs,
    );
    expect(nowMs).toBeLessThanOrEqual(3_500);
    expect(result).toMatchObject({ ratePerSecond: 400, stoppedBy: 'budget', hold: null, spentS: 3 });
  });
});
