// `callbridge bench console`: what open consoles cost the server (BENCHMARKS.md, "Consoles on the
// live-calls feed"). A real server (`node dist/main.js`) in a fleet sharing Redis, and a stand-in
// peer instance carrying N live calls: it keeps them in the live-call directory, beats, and starts
// and ends calls at a steady churn, telling the fleet as an instance does. The server's CPU is
// measured over a window with no console open, then with C consoles following
// GET /v1/calls/live/events; each console's view is checked against the directory at the end and
// the delay from a change to its arrival in every console is sampled.
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { fleetKeys } from '../fleet/keys.js';
import { spawnBenchServer, stopBenchServer, waitForHealthz } from './bench-server.js';
import { openConsoles } from './console-feeds.js';
import { StandInPeer } from './console-peer.js';
import { parseBenchOptions, usageError } from './options.js';
import { cpuSpentMs, processCpu } from './proc-stats.js';

export const CONSOLE_BENCH_USAGE = `usage: callbridge bench console [--calls N] [--consoles C] [--window S] [--churn N]
                               [--redis URL] [--out FILE]

  --calls N     live calls in the fleet (default 500)
  --consoles C  consoles following the live feed in the second window (default 10)
  --window S    seconds each window measures (default 20)
  --churn N     calls ending and as many starting per second (default 10)
  --redis URL   the Redis the fleet shares (default redis://127.0.0.1:6379)
  --out FILE    also write the JSON result here
`;

const COMMAND = 'bench console';
const TOKEN = 'bench-console-admin-token-0000000001';

interface ConsoleBenchOptions {
  calls: number;
  consoles: number;
  windowMs: number;
  churn: number;
  redisUrl: string;
  out: string | undefined;
}

/** The options, or the exit status of a usage error or of --help. */
function consoleBenchOptions(args: string[]): ConsoleBenchOptions | number {
  const values = parseBenchOptions(
    COMMAND,
    args,
    {
      calls: { type: 'string' },
      consoles: { type: 'string' },
      window: { type: 'string' },
      churn: { type: 'string' },
      redis: { type: 'string' },
      out: { type: 'string' },
    },
    CONSOLE_BENCH_USAGE,
  );
  if (typeof values === 'number') return values;
  const calls = Number(values.calls ?? 500);
  const consoles = Number(values.consoles ?? 10);
  const windowMs = Number(values.window ?? 20) * 1_000;
  const churn = Number(values.churn ?? 10);
  if (!(
    calls >= 1 &&
    calls <= 100_000 &&
    consoles >= 1 &&
    consoles <= 1_000 &&
    windowMs >= 1_000 &&
    churn >= 0
  )) {
    return usageError(COMMAND, CONSOLE_BENCH_USAGE);
  }
  const redisUrl = values.redis ?? 'redis://127.0.0.1:6379';
  return { calls, consoles, windowMs, churn, redisUrl, out: values.out };
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`${line}\n`);

/** The server's CPU over one window of `windowMs`, in % of one core. */
async function measureCpu(pid: number, windowMs: number, label: string) {
  const before = processCpu(pid);
  const t0 = Date.now();
  await sleep(windowMs);
  const after = processCpu(pid);
  const elapsed = Date.now() - t0;
  const cpuMs = cpuSpentMs(before, after);
  const share = cpuMs === null ? null : Math.round((cpuMs / elapsed) * 1000) / 10;
  log(`${label}: server CPU ${share}% of one core over ${elapsed} ms`);
  return { cpuPercentOfOneCore: share, cpuMs, windowMs: elapsed };
}

/** Removes every key under `prefix`, the run's own. */
async function deleteKeysUnder(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    await Promise.all(found.map((key) => redis.del(key)));
    cursor = nextCursor;
  } while (cursor !== '0');
}

export async function consoleBenchCommand(args: string[]): Promise<number> {
  const options = consoleBenchOptions(args);
  if (typeof options === 'number') return options;
  const { calls, consoles, windowMs, churn } = options;
  const prefix = `callbridge-bench-console-${process.pid}:`;
  const redis = new Redis(options.redisUrl);
  const bench = await spawnBenchServer('console', {
    ADMIN_TOKEN: TOKEN,
    REDIS_URL: options.redisUrl,
    REDIS_KEY_PREFIX: prefix,
    INSTANCE_ID: 'bench-server',
  });
  const peer = new StandInPeer(redis, fleetKeys(prefix), calls, churn);
  try {
    await peer.beat();
    await waitForHealthz(bench, 30_000, 200);
    peer.start();
    log(`bench console: ${calls} live calls, churn ${churn}/s, windows of ${windowMs / 1000} s`);
    // Settle, then the quiet window.
    await sleep(3_000);
    const idle = await measureCpu(bench.server.pid!, windowMs, '0 consoles');
    const open = await openConsoles(bench.base, TOKEN, consoles, peer.startedAtMs);
    open.delaysMs.length = 0;
    const followed = await measureCpu(bench.server.pid!, windowMs, `${consoles} consoles`);
    // Every console's view is the directory's, give or take the changes of the last second.
    await sleep(1_500);
    const expected = new Set(peer.live.keys());
    const views = open.views.map((view) => {
      let missing = 0;
      for (const sid of expected) if (!view.has(sid)) missing++;
      return { calls: view.size, missing };
    });
    open.close();
    const result = {
      bench: 'console',
      calls,
      consoles,
      churnPerSecond: churn,
      node: process.version,
      at: new Date().toISOString(),
      idle,
      followed,
      extraCpuPercentPerConsole:
        idle.cpuPercentOfOneCore !== null && followed.cpuPercentOfOneCore !== null
          ? Math.round(((followed.cpuPercentOfOneCore - idle.cpuPercentOfOneCore) / consoles) * 100) / 100
          : null,
      changeToConsoleMs: {
        p50: percentile(open.delaysMs, 50),
        p95: percentile(open.delaysMs, 95),
        samples: open.delaysMs.length,
      },
      views,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (options.out) writeFileSync(options.out, `${JSON.stringify(result, null, 2)}\n`);
    return views.every((view) => view.missing <= churn) ? 0 : 1;
  } catch (err) {
    process.stderr.write(`callbridge bench console: ${(err as Error).message}\n`);
    return 1;
  } finally {
    peer.stop();
    await stopBenchServer(bench);
    await deleteKeysUnder(redis, prefix);
    await redis.quit();
  }
}
