// `callbridge bench` runs end to end through its real processes (server, load agent, load carrier,
// baseline relay) and reports every field BENCHMARKS.md shows, with every call completed and every byte
// delivered intact and in order. No timing thresholds: the machines CI runs on vary too much.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';

const latency = {
  count: expect.any(Number),
  p50: expect.any(Number),
  p99: expect.any(Number),
  max: expect.any(Number),
};

const figures = {
  completedCalls: 5,
  failedCalls: 0,
  failures: {},
  uplinkLatencyMs: latency,
  downlinkLatencyMs: latency,
  bargeInMs: expect.objectContaining({ count: expect.any(Number) }),
  bytesLost: 0,
  bytesReordered: 0,
  bytesCorrupt: 0,
  serverCpuPerCallPct: expect.any(Number),
  serverRssPerCallKB: expect.any(Number),
};

describe('callbridge bench', () => {
  let dir: string;
  beforeAll(() => {
    buildIfStale();
    dir = mkdtempSync(join(tmpdir(), 'callbridge-bench-test-'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs a tiny load through callbridge and the baseline and reports it as one JSON object', async () => {
    const out = join(dir, 'bench.json');
    const run = await runCli(
      ['bench', '--calls', '5', '--duration', '3', '--ramp', '1', '--out', out],
      110_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8'));
    expect(JSON.parse(run.stdout)).toEqual(result);
    expect(result).toMatchObject({ carrier: 'twilio', calls: 5, durationS: 3, ...figures });
    expect(result.baseline).toMatchObject({
      ...figures,
      ratios: expect.objectContaining({
        uplinkP99: expect.any(Number),
        downlinkP99: expect.any(Number),
        serverCpuPerCall: expect.any(Number),
        serverCpuPerLoadCpu: expect.any(Number),
      }),
    });
    for (const side of [result, result.baseline]) {
      const { traffic } = side;
      expect(traffic.uplinkSentBytes).toBeGreaterThan(0);
      expect(traffic.uplinkReceivedBytes).toBe(traffic.uplinkSentBytes);
      expect(traffic.downlinkSentBytes).toBeGreaterThan(0);
      expect(traffic.downlinkReceivedBytes).toBe(traffic.downlinkSentBytes);
      // Every barge-in was answered with exactly one clear.
      expect(traffic.bargeIns).toBeGreaterThan(0);
      expect(traffic.clears).toBe(traffic.bargeIns);
    }
    // callbridge marks its replies and the carrier echoes them; the bare relay has no marks.
    expect(result.traffic.marksEchoed).toBeGreaterThan(0);

    // The sample relay ran on the same load: every call carried, a mark per media message echoed.
    expect(result.sampleRelay).toMatchObject({
      ...figures,
      ratios: expect.objectContaining({
        downlinkP99: expect.any(Number),
        serverCpuPerCall: expect.any(Number),
      }),
    });
    const sample = result.sampleRelay.traffic;
    expect(sample.uplinkReceivedBytes).toBe(sample.uplinkSentBytes);
    expect(sample.downlinkReceivedBytes).toBe(sample.downlinkSentBytes);
    expect(sample.clears).toBe(sample.bargeIns);
    expect(sample.marksEchoed).toBeGreaterThan(0);
    // Each target's loop probe reported the window second by second.
    for (const side of [result, result.baseline, result.sampleRelay]) {
      const { loopDelayPerSecond, loopDelayMaxMs } = side.server;
      expect(loopDelayPerSecond.maxMs.length).toBeGreaterThanOrEqual(2);
      expect(loopDelayPerSecond.p99Ms).toHaveLength(loopDelayPerSecond.maxMs.length);
      expect(loopDelayMaxMs).toBe(Math.max(...loopDelayPerSecond.maxMs));
    }
    // The summary for a reader shows the three targets' latencies side by side.
    expect(run.stderr).toMatch(/callbridge +bare relay +sample relay/);
    expect(run.stderr).toMatch(/barge-in p99 ms +[\d.]+ +[\d.]+ +[\d.]+/);
  }, 120_000);

  // Each carrier's own format and framing: μ-law JSON (Telnyx, Plivo), binary 16-bit PCM at 16 kHz
  // (Vonage), 16-bit PCM at 8 kHz in 100 ms chunks (Exotel). Every byte must arrive intact.
  it.each(['telnyx', 'plivo', 'vonage', 'exotel'])(
    'runs a tiny load as %s speaks, byte for byte',
    async (carrier) => {
      const out = join(dir, `bench-${carrier}.json`);
      // Four seconds: in two, three calls sometimes start no reply inside the measuring window,
      // which leaves the downlink with no sample to read.
      const run = await runCli(
        ['bench', '--carrier', carrier, '--calls', '3', '--duration', '4', '--ramp', '1', '--out', out],
        110_000,
      );
      expect(run.code, run.stderr).toBe(0);
      const result = JSON.parse(readFileSync(out, 'utf8'));
      expect(result).toMatchObject({ carrier, calls: 3, ...figures, completedCalls: 3 });
      const { traffic } = result;
      expect(traffic.uplinkSentBytes).toBeGreaterThan(0);
      expect(traffic.uplinkReceivedBytes).toBe(traffic.uplinkSentBytes);
      expect(traffic.downlinkSentBytes).toBeGreaterThan(0);
      expect(traffic.downlinkReceivedBytes).toBe(traffic.downlinkSentBytes);
      expect(traffic.clears).toBe(traffic.bargeIns);
      expect(traffic.marksEchoed).toBeGreaterThan(0);
    },
    120_000,
  );

  it('runs the targets in turn for --rounds and reports each round and the medians', async () => {
    const out = join(dir, 'bench-rounds.json');
    const run = await runCli(
      ['bench', '--calls', '3', '--duration', '2', '--ramp', '1', '--rounds', '2', '--out', out],
      110_000,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('round 2 of 2');
    const result = JSON.parse(readFileSync(out, 'utf8'));
    const { each, median } = result.rounds;
    expect(each).toHaveLength(2);
    for (const round of each) {
      expect(round.clean).toBe(true);
      expect(round.serverCpuPerCallPct).toBeGreaterThan(0);
      expect(round.baselineCpuPerCallPct).toBeGreaterThan(0);
      expect(round.ratio).toBeCloseTo(round.serverCpuPerCallPct / round.baselineCpuPerCallPct, 1);
    }
    // The first round is the one reported in full.
    expect(each[0].serverCpuPerCallPct).toBe(result.serverCpuPerCallPct);
    expect(median.serverCpuPerCallPct).toBeCloseTo(
      (each[0].serverCpuPerCallPct + each[1].serverCpuPerCallPct) / 2,
      3,
    );
    expect(median.ratio).toBeCloseTo((each[0].ratio + each[1].ratio) / 2, 2);
  }, 120_000);

  it('refuses a bad option with exit code 2 and the usage', async () => {
    const run = await runCli(['bench', '--calls', '0'], 10_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--calls must be an integer >= 1');
    expect(run.stderr).toContain('usage: callbridge bench');
  });

  it('refuses a carrier it has no simulated carrier for, naming those it has', async () => {
    const run = await runCli(['bench', '--carrier', 'pigeon'], 10_000);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--carrier must be one of twilio(, \w+)*, got "pigeon"/);
  });
});
