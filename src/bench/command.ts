// `callbridge bench`: the load benchmark of BENCHMARKS.md. Drives N concurrent simulated calls
// through callbridge and then, on the same load, through a bare relay and a sample relay (what the
// public thin relays do per message), and prints one JSON object (also written to --out) and a
// short summary of the three side by side (stderr). Exit 1 when any call failed or any byte was lost, reordered or damaged,
// 2 on a usage error. With `--instances N` it runs the fleet benchmark instead (fleet.ts): N
// instances behind the nginx balancer against one, with and without instance routing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dialectNames, findDialect } from '../sim/carrier/dialects/index.js';
import { type FleetOptions, runFleetBench } from './fleet.js';
import { stopAll } from './processes.js';
import { AGENT_PREWARM, runTarget, type TargetResult } from './run.js';
import { sideBySide } from './side-by-side.js';

import type { LatencySummary } from './samples.js';

export const BENCH_USAGE = `usage: callbridge bench [--calls N] [--duration S] [--ramp S] [--out FILE]
                       [--carrier NAME] [--cpu-prof DIR] [--no-baseline] [--record] [--rounds N]

  --calls N        concurrent calls (default 100)
  --carrier NAME   the carrier the load plays: ${dialectNames().join(', ')} (default twilio); the
                   baseline relay speaks it too
  --duration S     measurement window in seconds, with every call up (default 30)
  --ramp S         calls start evenly over this many seconds before the window (default calls/100,
                   at least 1, at most 30)
  --out FILE       also write the JSON result here
  --cpu-prof DIR   run the callbridge server under node --cpu-prof, profile written to DIR and its
                   top self-time functions added to the result
  --no-baseline    measure callbridge only (neither the bare relay nor the sample relay)
  --record         record every call of the load to the file store (RECORDING_STORE=file, no
                   consent prompt); the result counts the files stored
  --rounds N       run the targets N times in turn (callbridge, bare relay, sample relay,
                   callbridge, ...; default 1): \`rounds\` gives each round's CPU per call, whether
                   it was clean (no failed call, no byte lost) and the medians, the figures to read
                   on a machine whose load drifts; the rest of the result is the first round's

       callbridge bench --instances N [--calls N] [--duration S] [--ramp S] [--out FILE]
                       [--agent-configure-ms MS] [--carrier-delay-ms MS] [--redis URL]

  --instances N    the fleet benchmark: N instances (2 to 8) sharing Redis behind the nginx
                   balancer of deploy/nginx/, against one instance on the same load, with and
                   without instance routing; measures call setup latency (Twilio calls)
  --calls N        calls placed (default 60)
  --duration S     how long each call lasts, in seconds (default 10)
  --ramp S         calls start evenly over this many seconds (default 5)
  --agent-configure-ms MS  how long the stand-in agent takes to apply Settings (default 300)
  --carrier-delay-ms MS    how long the phone waits after the webhook's answer before it opens the
                   media stream (default 500)
  --redis URL      the Redis the instances share (default redis://127.0.0.1:6379)

Prints one JSON object (see BENCHMARKS.md): callbridge's figures, \`baseline\` (the bare relay) and
\`sampleRelay\` (the sample relay), each relay with the ratios callbridge / relay; then, on stderr,
the three side by side. Exit status 1 when a call failed or a byte was lost, reordered or damaged,
in callbridge or in a relay; 2 on a bad option.
`;

export interface BenchOptions {
  carrier: string;
  calls: number;
  durationMs: number;
  rampMs: number;
  out: string | null;
  cpuProfDir: string | null;
  baseline: boolean;
  record: boolean;
  rounds: number;
}

function positiveNumber(name: string, raw: string, integer: boolean, min: number): number {
  const value = Number(raw);
  const ok =
    raw.trim() !== '' && Number.isFinite(value) && value >= min && (!integer || Number.isInteger(value));
  if (!ok)
    throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got "${raw}"`);
  return value;
}

/** `--instances N`: the fleet benchmark, with the output file the load benchmark also takes. */
export type FleetBenchOptions = FleetOptions & { out: string | null };

/** Options of the load benchmark only, and of the fleet benchmark only. */
const LOAD_ONLY = ['carrier', 'cpu-prof', 'no-baseline', 'record', 'rounds'] as const;
const MAX_ROUNDS = 10;
const FLEET_ONLY = ['agent-configure-ms', 'carrier-delay-ms', 'redis'] as const;
const MAX_INSTANCES = 8;

export function parseBenchArgs(args: string[]): BenchOptions | FleetBenchOptions {
  const { values } = parseArgs({
    args,
    options: {
      calls: { type: 'string' },
      carrier: { type: 'string' },
      duration: { type: 'string' },
      ramp: { type: 'string' },
      out: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'no-baseline': { type: 'boolean' },
      record: { type: 'boolean' },
      rounds: { type: 'string' },
      instances: { type: 'string' },
      'agent-configure-ms': { type: 'string' },
      'carrier-delay-ms': { type: 'string' },
      redis: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.instances !== undefined) {
    for (const name of LOAD_ONLY) {
      if (values[name] !== undefined) throw new Error(`--${name} does not apply to --instances`);
    }
    return parseFleetArgs({ ...values, instances: values.instances });
  }
  for (const name of FLEET_ONLY) {
    if (values[name] !== undefined) throw new Error(`--${name} applies to --instances only`);
  }
  const carrier = values.carrier ?? 'twilio';
  if (findDialect(carrier) === undefined) {
    throw new Error(`--carrier must be one of ${dialectNames().join(', ')}, got "${carrier}"`);
  }
  const calls = values.calls === undefined ? 100 : positiveNumber('calls', values.calls, true, 1);
  const durationS =
    values.duration === undefined ? 30 : positiveNumber('duration', values.duration, false, 1);
  const rampS =
    values.ramp === undefined
      ? Math.min(30, Math.max(1, calls / 100))
      : positiveNumber('ramp', values.ramp, false, 0);
  return {
    carrier,
    calls,
    durationMs: Math.round(durationS * 1000),
    rampMs: Math.round(rampS * 1000),
    out: values.out ?? null,
    cpuProfDir: values['cpu-prof'] === undefined ? null : resolve(values['cpu-prof']),
    baseline: !values['no-baseline'],
    record: values.record === true,
    rounds: values.rounds === undefined ? 1 : rounds(values.rounds),
  };
}

function rounds(raw: string): number {
  const value = positiveNumber('rounds', raw, true, 1);
  if (value > MAX_ROUNDS) throw new Error(`--rounds must be at most ${MAX_ROUNDS}, got "${raw}"`);
  return value;
}

function parseFleetArgs(values: {
  instances: string;
  calls?: string;
  duration?: string;
  ramp?: string;
  out?: string;
  'agent-configure-ms'?: string;
  'carrier-delay-ms'?: string;
  redis?: string;
}): FleetBenchOptions {
  const instances = Number(values.instances);
  if (!/^\d+$/.test(values.instances) || instances < 2 || instances > MAX_INSTANCES) {
    throw new Error(`--instances must be an integer from 2 to ${MAX_INSTANCES}, got "${values.instances}"`);
  }
  const number = (name: string, raw: string | undefined, fallback: number, integer: boolean, min: number) =>
    raw === undefined ? fallback : positiveNumber(name, raw, integer, min);
  const redisUrl = values.redis ?? 'redis://127.0.0.1:6379';
  if (!/^rediss?:\/\/[^\s]+$/.test(redisUrl) || !URL.canParse(redisUrl)) {
    throw new Error('--redis must be a redis:// or rediss:// URL');
  }
  return {
    instances,
    calls: number('calls', values.calls, 60, true, 1),
    holdMs: Math.round(number('duration', values.duration, 10, false, 1) * 1000),
    rampMs: Math.round(number('ramp', values.ramp, 5, false, 0) * 1000),
    agentConfigureMs: number('agent-configure-ms', values['agent-configure-ms'], 300, true, 0),
    carrierDelayMs: number('carrier-delay-ms', values['carrier-delay-ms'], 500, true, 0),
    redisUrl,
    out: values.out ?? null,
  };
}

const ratio = (ours: number | null | undefined, theirs: number | null | undefined) =>
  ours == null || theirs == null || theirs === 0 ? null : Math.round((ours / theirs) * 100) / 100;

function ratios(ours: TargetResult, base: TargetResult) {
  const p = (pick: (r: TargetResult) => LatencySummary, key: 'p50' | 'p99') =>
    ratio(pick(ours)[key], pick(base)[key]);
  return {
    uplinkP50: p((r) => r.uplinkLatencyMs, 'p50'),
    uplinkP99: p((r) => r.uplinkLatencyMs, 'p99'),
    downlinkP50: p((r) => r.downlinkLatencyMs, 'p50'),
    downlinkP99: p((r) => r.downlinkLatencyMs, 'p99'),
    bargeInP50: p((r) => r.bargeInMs, 'p50'),
    bargeInP99: p((r) => r.bargeInMs, 'p99'),
    serverCpuPerCall: ratio(ours.serverCpuPerCallPct, base.serverCpuPerCallPct),
    /** The same with each run's server CPU taken relative to its load generators': steadier. */
    serverCpuPerLoadCpu: ratio(ours.server.cpuPerLoadCpu, base.server.cpuPerLoadCpu),
    serverRssPerCall: ratio(ours.serverRssPerCallKB, base.serverRssPerCallKB),
  };
}

const clean = (r: TargetResult) =>
  r.failedCalls === 0 && r.bytesLost + r.bytesReordered + r.bytesCorrupt === 0;

/** One round: callbridge, the bare relay (`baseline`) and the sample relay (`sample`), null when not run. */
export type Round = { result: TargetResult; baseline: TargetResult | null; sample?: TargetResult | null };

/** A round whose targets all carried every call with every byte intact. */
const cleanRun = (run: Round) =>
  clean(run.result) &&
  (run.baseline === null || clean(run.baseline)) &&
  (run.sample == null || clean(run.sample));

export async function benchCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  let parsed: BenchOptions | FleetBenchOptions;
  try {
    parsed = parseBenchArgs(args);
  } catch (err) {
    process.stderr.write(`callbridge bench: ${(err as Error).message}\n${BENCH_USAGE}`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`bench: ${line}\n`);
  if ('instances' in parsed) return fleetBench(parsed, log);
  const opts = parsed;
  const startedAt = new Date();
  const runs: Round[] = [];
  try {
    for (let round = 1; round <= opts.rounds; round++) {
      if (opts.rounds > 1) log(`round ${round} of ${opts.rounds}`);
      // The profile, when asked for, is of the first round.
      const cpuProfDir = round === 1 ? opts.cpuProfDir : null;
      const result = await runTarget('callbridge', { ...opts, cpuProfDir, log });
      const relay = { ...opts, cpuProfDir: null, record: false, log };
      const baseline = opts.baseline ? await runTarget('baseline', relay) : null;
      const sample = opts.baseline ? await runTarget('sample', relay) : null;
      runs.push({ result, baseline, sample });
    }
  } catch (err) {
    process.stderr.write(`callbridge bench: ${(err as Error).message}\n`);
    return 1;
  }
  const { result, baseline, sample = null } = runs[0]!;
  const cpu = cpus();
  const { profile, ...measured } = result;
  const output = {
    carrier: opts.carrier,
    calls: opts.calls,
    durationS: opts.durationMs / 1000,
    rampS: opts.rampMs / 1000,
    record: opts.record,
    ...measured,
    baseline: baseline ? { ...baseline, ratios: ratios(result, baseline) } : null,
    sampleRelay: sample ? { ...sample, ratios: ratios(result, sample) } : null,
    ...(opts.rounds > 1 ? { rounds: roundsSummary(runs) } : {}),
    ...(profile ? { profile } : {}),
    run: {
      date: startedAt.toISOString(),
      node: process.version,
      cores: cpu.length,
      cpuModel: cpu[0]?.model ?? 'unknown',
      memoryMB: Math.round(totalmem() / 1024 / 1024),
      agentPrewarm: AGENT_PREWARM,
      window: 'latency samples and server CPU count only while every call is up (after ramp + 1 s)',
    },
  };
  report(output, opts.out);
  process.stderr.write(sideBySide({ callbridge: result, 'bare relay': baseline, 'sample relay': sample }));
  return runs.every(cleanRun) ? 0 : 1;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const value = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return Math.round(value * 10_000) / 10_000;
}

/**
 * Each round's CPU per call (and its ratio to the baseline's of the same round), whether both of
 * its targets ran clean, and the medians. Only the first round is reported in full, so `clean` is
 * what says a later round's figures come from a run that carried every call.
 */
export function roundsSummary(runs: Round[]) {
  const each = runs.map((run) => ({
    clean: cleanRun(run),
    serverCpuPerCallPct: run.result.serverCpuPerCallPct,
    baselineCpuPerCallPct: run.baseline?.serverCpuPerCallPct ?? null,
    ratio: run.baseline ? ratio(run.result.serverCpuPerCallPct, run.baseline.serverCpuPerCallPct) : null,
    // Only rounds that ran the sample relay carry its figures.
    ...(run.sample
      ? {
          sampleCpuPerCallPct: run.sample.serverCpuPerCallPct,
          sampleRatio: ratio(run.result.serverCpuPerCallPct, run.sample.serverCpuPerCallPct),
        }
      : {}),
  }));
  const numbers = (pick: (round: (typeof each)[number]) => number | null) =>
    each.map(pick).filter((value): value is number => value !== null);
  return {
    each,
    median: {
      serverCpuPerCallPct: median(numbers((round) => round.serverCpuPerCallPct)),
      baselineCpuPerCallPct: median(numbers((round) => round.baselineCpuPerCallPct)),
      ratio: median(numbers((round) => round.ratio)),
      ...(runs.some((run) => run.sample)
        ? {
            sampleCpuPerCallPct: median(numbers((round) => round.sampleCpuPerCallPct ?? null)),
            sampleRatio: median(numbers((round) => round.sampleRatio ?? null)),
          }
        : {}),
    },
  };
}

/** Prints the result as one JSON object, and writes it to `out` too when given. */
function report(output: unknown, out: string | null): void {
  const text = `${JSON.stringify(output, null, 2)}\n`;
  process.stdout.write(text);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text);
  }
}

/** The fleet benchmark; exit 1 when a call failed in any run. */
async function fleetBench(opts: FleetBenchOptions, log: (line: string) => void): Promise<number> {
  let result;
  try {
    result = await runFleetBench(opts, log);
  } catch (err) {
    await stopAll();
    process.stderr.write(`callbridge bench: ${(err as Error).message}\n`);
    return 1;
  }
  report(result, opts.out);
  return result.runs.some((run) => run.failedCalls > 0) ? 1 : 0;
}
