// `rounds` in the bench's JSON: a round counts as clean only when both of its targets carried every
// call with every byte intact, since only the first round's other figures are reported in full.
import { describe, expect, it } from 'vitest';
import { type Round, roundsSummary } from '../../src/bench/command.js';
import type { TargetResult } from '../../src/bench/run.js';

function target(cpu: number, faults: Partial<TargetResult> = {}): TargetResult {
  return {
    serverCpuPerCallPct: cpu,
    failedCalls: 0,
    bytesLost: 0,
    bytesReordered: 0,
    bytesCorrupt: 0,
    ...faults,
  } as TargetResult;
}

describe('the rounds summary', () => {
  it('marks each round clean or not, by either target, and keeps every round in the medians', () => {
    const rounds: Round[] = [
      { result: target(0.2), baseline: target(0.16) },
      { result: target(0.22, { bytesLost: 320 }), baseline: target(0.17) },
      { result: target(0.21), baseline: target(0.15, { failedCalls: 1 }) },
      { result: target(0.19, { bytesReordered: 160 }), baseline: null },
    ];
    const { each, median } = roundsSummary(rounds);
    expect(each.map((round) => round.clean)).toEqual([true, false, false, false]);
    expect(each[0]).toEqual({
      clean: true,
      serverCpuPerCallPct: 0.2,
      baselineCpuPerCallPct: 0.16,
      ratio: 1.25,
    });
    expect(each[3]).toMatchObject({ baselineCpuPerCallPct: null, ratio: null });
    expect(median.serverCpuPerCallPct).toBe(0.205);
    expect(median.baselineCpuPerCallPct).toBe(0.16);
  });

  it('counts a round with no baseline clean when callbridge ran clean', () => {
    expect(roundsSummary([{ result: target(0.2), baseline: null }]).each[0]!.clean).toBe(true);
  });

  it('reports the sample relay per round and in the medians, and a faulty sample relay spoils its round', () => {
    const { each, median } = roundsSummary([
      { result: target(0.2), baseline: target(0.16), sample: target(0.25) },
      { result: target(0.21), baseline: target(0.15), sample: target(0.3, { bytesLost: 160 }) },
    ]);
    expect(each.map((round) => round.clean)).toEqual([true, false]);
    expect(each[0]).toMatchObject({ sampleCpuPerCallPct: 0.25, sampleRatio: 0.8 });
    expect(each[1]).toMatchObject({ sampleCpuPerCallPct: 0.3, sampleRatio: 0.7 });
    expect(median.sampleCpuPerCallPct).toBe(0.275);
    expect(median.sampleRatio).toBe(0.75);
  });
});
