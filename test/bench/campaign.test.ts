// The campaign benchmark's own arithmetic: distinct valid numbers that pick the intended callees,
// and the exact count of calls in flight from their start and end times.
import { describe, expect, it } from 'vitest';
import { benchPhones, maxOverlap, worstWindow } from '../../src/bench/campaign.js';
import { normalizePhone } from '../../src/outbound/phone.js';
import { calleeFor } from '../../src/sim/callee/plan.js';

describe('the campaign benchmark', () => {
  it('counts the most dials within any one-second window, its end left out', () => {
    expect(worstWindow([])).toBe(0);
    expect(worstWindow([5_000])).toBe(1);
    // [999, 1999) holds 999, 1000 and 1500; 1999 falls in the next window.
    expect(worstWindow([1_999, 0, 999, 1_000, 1_500])).toBe(3);
    expect(worstWindow([0, 1_000, 2_000, 3_000])).toBe(1);
  });

  it('makes distinct valid numbers; the quick mix only busy, unanswered and failing callees', () => {
    const quick = benchPhones(1000, 'quick');
    expect(new Set(quick).size).toBe(1000);
    for (const phone of quick) {
      expect(normalizePhone(phone).ok, phone).toBe(true);
      expect(['busy', 'no_answer', 'unreachable']).toContain(calleeFor(phone).kind);
    }
    const plan = benchPhones(1000, 'plan');
    expect(new Set(plan).size).toBe(1000);
    expect(new Set(plan.map((phone) => calleeFor(phone).kind)).size).toBe(7);
  });

  it('counts the most calls open at once, a slot freed and taken at one instant as one', () => {
    expect(maxOverlap([])).toBe(0);
    expect(
      maxOverlap([
        [0, 10],
        [5, 15],
        [10, 20],
        [12, 13],
      ]),
    ).toBe(3);
    expect(
      maxOverlap([
        [0, 10],
        [10, 20],
      ]),
    ).toBe(1);
  });
});
