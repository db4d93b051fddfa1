// `callbridge bench console`: what open consoles cost the server (BENCHMARKS.md, "Consoles on the
// live-calls feed"). A real server (`node dist/main.js`) in a fleet sharing Redis, and a stand-in
// peer instance carrying N live calls: it keeps them in the live-call directory, beats, and starts
// and ends calls at a steady churn, telling the fleet as an instance does. The server's CPU is
// measured over a window with no console open, then with C consoles following
// GET /v1/calls/live/events; each console's view is checked against the directory at the end and
// the delay from a change to its arrival in every console is sampled.
import { rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { LiveCall } from '../call/watch/live-call.js';
import { fleetKeys } from '../fleet/keys.js';
import { spawnBenchServer } from './bench-server.js';
import { processCpu } from './proc-stats.js';

export const CONSOLE_BENCH_USAGE = `usage: callbridge bench console [--calls N] [--consoles C] [--window S] [--churn N]
                               [--redis URL] [--out FILE]

  --calls N     live calls in the fleet (default 500)
  --consoles C  consoles following the live feed in the second window (default 10)
  --window S    seconds each window measures (default 20)
  --churn N     calls ending and as many starting per second (default 10)
  --redis URL   the Redis the fleet shares (default redis://127.0.0.1:6379)
  --out FILE    also write the JSON result here
`;

const TOKEN = 'bench-console-admin-token-0000000001';
const PEER = 'bench-peer';

interface Consoles {
  views: Array<Map<string, LiveCall>>;
  delaysMs: number[];
  close(): void;
}

function liveCall(n: number): LiveCall {
  return {
    callSid: `CAbench${String(n).padStart(8, '0')}`,
    carrier: 'twilio',
    direction: n % 2 === 0 ? 'inbound' : 'outbound',
    from: `+1212555${String(n % 10_000).padStart(4, '0')}`,
    to: '+12125550100',
    startedAt: new Date().toISOString(),
    campaign: null,
    instance: PEER,
    region: 'bench',
  };
}

async function openConsoles(
  base: string,
  count: number,
  startedAtMs: Map<string, number>,
): Promise<Consoles> {
  const controllers: AbortController[] = [];
  const views: Array<Map<string, LiveCall>> = [];
  const delaysMs: number[] = [];
  await Promise.all(
    Array.from({ length: count }, async () => {
      const controller = new AbortController();
      controllers.push(controller);
      const view = new Map<string, LiveCall>();
      views.push(view);
      const res = await fetch(`${base}/v1/calls/live/events`, {
        headers: { authorization: `Bearer ${TOKEN}` },
        signal: controller.signal,
      });
      const snapshot = new Promise<void>((resolve) => {
        void (async () => {
          const decoder = new TextDecoder();
          let buffered = '';
          try {
            for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
              buffered += decoder.decode(chunk, { stream: true });
              let end: number;
              while ((end = buffered.indexOf('\n\n')) >= 0) {
                const block = buffered.slice(0, end);
                buffered = buffered.slice(end + 2);
                const event = /^event: (.+)$/m.exec(block)?.[1];
                const data = /^data: (.+)$/m.exec(block)?.[1];
                if (!event || !data) continue;
                const body = JSON.parse(data) as { calls?: LiveCall[]; callSid: string };
                if (event === 'snapshot') {
                  for (const call of body.calls ?? []) view.set(call.callSid, call);
                  resolve();
                } else if (event === 'ended') {
                  view.delete(body.callSid);
                } else {
                  view.set(body.callSid, body as unknown as LiveCall);
                  const at = startedAtMs.get(body.callSid);
                  if (at !== undefined) delaysMs.push(Date.now() - at);
                }
              }
            }
          } catch {
            // Closed at the end of the window.
          }
        })();
      });
      await snapshot;
    }),
  );
  return { views, delaysMs, close: () => controllers.forEach((c) => c.abort()) };
}

function percentile(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function consoleBenchCommand(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        calls: { type: 'string' },
        consoles: { type: 'string' },
        window: { type: 'string' },
        churn: { type: 'string' },
        redis: { type: 'string' },
        out: { type: 'string' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`callbridge bench console: ${(err as Error).message}\n${CONSOLE_BENCH_USAGE}`);
    return 2;
  }
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
    process.stderr.write(CONSOLE_BENCH_USAGE);
    return 2;
  }
  const redisUrl = values.redis ?? 'redis://127.0.0.1:6379';
  const prefix = `callbridge-bench-console-${process.pid}:`;
  const keys = fleetKeys(prefix);
  const redis = new Redis(redisUrl);
  const { server, base, dataDir } = await spawnBenchServer('console', {
    ADMIN_TOKEN: TOKEN,
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: prefix,
    INSTANCE_ID: 'bench-server',
  });
  // The stand-in peer: its calls, beaten into the directory every second and changed at the churn.
  const live = new Map<string, LiveCall>();
  const startedAtMs = new Map<string, number>();
  let next = 0;
  for (; next < calls; next++) {
    const call = liveCall(next);
    live.set(call.callSid, call);
  }
  const beat = async () => {
    const tx = redis.multi().del(keys.liveCalls(PEER));
    tx.hset(
      keys.liveCalls(PEER),
      Object.fromEntries([...live].map(([sid, call]) => [sid, JSON.stringify(call)])),
    );
    tx.pexpire(keys.liveCalls(PEER), 4_000);
    tx.zadd(keys.instances, Date.now(), PEER);
    await tx.exec();
  };
  let timers: NodeJS.Timeout[] = [];
  const log = (line: string) => process.stderr.write(`${line}\n`);
  try {
    await beat();
    const ready = Date.now() + 30_000;
    while (
      !(await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (server.exitCode !== null || Date.now() > ready)
        throw new Error('the server did not become healthy');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    timers = [
      setInterval(() => void beat(), 1_000),
      setInterval(() => {
        // One tick a second: `churn` calls end and as many start, then the fleet is told.
        const ending = [...live.keys()].slice(0, churn);
        for (const sid of ending) live.delete(sid);
        for (let i = 0; i < churn; i++, next++) {
          const call = liveCall(next);
          live.set(call.callSid, call);
          startedAtMs.set(call.callSid, Date.now());
        }
        void beat().then(() => redis.publish(keys.liveChanged, PEER));
      }, 1_000),
    ];
    const measure = async (label: string) => {
      const pid = server.pid!;
      const before = processCpu(pid);
      const t0 = Date.now();
      await new Promise((resolve) => setTimeout(resolve, windowMs));
      const after = processCpu(pid);
      const elapsed = Date.now() - t0;
      const cpuMs = before && after ? after.userMs + after.systemMs - before.userMs - before.systemMs : null;
      const share = cpuMs === null ? null : Math.round((cpuMs / elapsed) * 1000) / 10;
      log(`${label}: server CPU ${share}% of one core over ${elapsed} ms`);
      return { cpuPercentOfOneCore: share, cpuMs, windowMs: elapsed };
    };
    log(`bench console: ${calls} live calls, churn ${churn}/s, windows of ${windowMs / 1000} s`);
    // Settle, then the quiet window.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const idle = await measure('0 consoles');
    const open = await openConsoles(base, consoles, startedAtMs);
    open.delaysMs.length = 0;
    const followed = await measure(`${consoles} consoles`);
    // Every console's view is the directory's, give or take the changes of the last second.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const expected = new Set(live.keys());
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
    if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
    return views.every((view) => view.missing <= churn) ? 0 : 1;
  } catch (err) {
    process.stderr.write(`callbridge bench console: ${(err as Error).message}\n`);
    return 1;
  } finally {
    for (const timer of timers) clearInterval(timer);
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    let cursor = '0';
    do {
      const [nextCursor, found] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      await Promise.all(found.map((key) => redis.del(key)));
      cursor = nextCursor;
    } while (cursor !== '0');
    await redis.quit();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
