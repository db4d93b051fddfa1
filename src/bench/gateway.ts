// The webhook gateway benchmark (BENCHMARKS.md): signed webhook deliveries per second that the
// gateway answers with a p99 under 50 ms, on the embedded SQLite store, on Redis, and for a bare
// Fastify route doing the same HMAC check (bare-gateway.ts). Each target runs as its own process;
// a closed loop of C concurrent senders posts distinct, signed `deploy` deliveries for a while at
// each concurrency, and the best throughput whose p99 stays under the bound is reported.
//
//   node dist/bench/gateway.js [--duration S] [--levels 1,2,4,8,16,32] [--redis URL] [--out FILE]
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { type BenchProcess, startProcess, stopAll, stopProcess } from './processes.js';
import { Samples, type LatencySummary } from './samples.js';

const SECRET = 'gateway-bench-deploy-secret';
const P99_BOUND_MS = 50;

interface LevelResult {
  concurrency: number;
  perSecond: number;
  latencyMs: LatencySummary;
  errors: number;
}

/** Posts signed deliveries from `concurrency` senders for `durationMs`; every answer must be 200. */
async function load(url: string, concurrency: number, durationMs: number): Promise<LevelResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const samples = new Samples();
  let errors = 0;
  let done = 0;
  const target = new URL('/webhooks/deploy', url);
  const endAt = performance.now() + durationMs;
  const post = () =>
    new Promise<number>((resolve) => {
      const body = JSON.stringify({
        id: `dep-${randomBytes(8).toString('hex')}`,
        type: 'deployment.succeeded',
      });
      const req = request(
        target,
        {
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-deploy-signature': createHmac('sha1', SECRET).update(body).digest('hex'),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  const sender = async () => {
    while (performance.now() < endAt) {
      const started = performance.now();
      const status = await post();
      if (status !== 200) errors++;
      samples.push(performance.now() - started);
      done++;
    }
  };
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: concurrency }, sender));
  const elapsed = performance.now() - startedAt;
  agent.destroy();
  return {
    concurrency,
    perSecond: Math.round((done / elapsed) * 1000),
    latencyMs: samples.summary(),
    errors,
  };
}

async function measure(proc: BenchProcess, levels: number[], durationMs: number) {
  // A short warm-up so JIT and connection set-up are not measured.
  await load(proc.url, 4, 1_000);
  const results: LevelResult[] = [];
  for (const concurrency of levels) results.push(await load(proc.url, concurrency, durationMs));
  const within = results.filter((r) => r.errors === 0 && (r.latencyMs.p99 ?? Infinity) < P99_BOUND_MS);
  const best = within.reduce<LevelResult | null>(
    (a, r) => (a === null || r.perSecond > a.perSecond ? r : a),
    null,
  );
  return { best, levels: results };
}

async function main(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      levels: { type: 'string' },
      redis: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
  });
  const durationMs = Number(values.duration ?? '5') * 1000;
  const levels = (values.levels ?? '1,2,4,8,16,32').split(',').map(Number);
  if (!Number.isFinite(durationMs) || durationMs <= 0 || levels.some((l) => !Number.isInteger(l) || l < 1)) {
    throw new Error('--duration must be a positive number of seconds and --levels positive integers');
  }
  const redisUrl = values.redis ?? 'redis://127.0.0.1:6379';
  const prefix = `callbridge-bench-${randomBytes(4).toString('hex')}:`;
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-gateway-bench-'));
  const common = {
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: 'gateway-bench-admin-token-0123456789',
    WEBHOOK_SECRET_DEPLOY: SECRET,
    AGENT_PREWARM: 'false',
  };
  const results: Record<string, unknown> = {};
  try {
    const targets: Array<[string, () => Promise<BenchProcess>]> = [
      [
        'bare_fastify',
        () => startProcess('bare gateway', 'dist/bench/bare-gateway.js', { WEBHOOK_SECRET_DEPLOY: SECRET }),
      ],
      ['callbridge_sqlite', () => startProcess('callbridge (SQLite)', 'dist/main.js', common)],
      [
        'callbridge_redis',
        () =>
          startProcess('callbridge (Redis)', 'dist/main.js', {
            ...common,
            REDIS_URL: redisUrl,
            REDIS_KEY_PREFIX: prefix,
          }),
      ],
    ];
    for (const [name, start] of targets) {
      const proc = await start();
      try {
        results[name] = await measure(proc, levels, durationMs);
      } finally {
        await stopProcess(proc);
      }
    }
  } finally {
    await stopAll();
    rmSync(dataDir, { recursive: true, force: true });
    const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        for (const key of keys) await redis.del(key);
        cursor = next;
      } while (cursor !== '0');
    } catch {
      // No Redis: nothing was written there.
    } finally {
      redis.disconnect();
    }
  }
  const report = {
    bench: 'gateway',
    p99BoundMs: P99_BOUND_MS,
    durationS: durationMs / 1000,
    machine: { cores: cpus().length, node: process.version },
    date: new Date().toISOString(),
    results,
  };
  const text = JSON.stringify(report, null, 2);
  process.stdout.write(`${text}\n`);
  if (values.out) writeFileSync(values.out, `${text}\n`);
}

main(process.argv.slice(2)).catch(async (err: Error) => {
  await stopAll();
  process.stderr.write(`gateway bench: ${err.message}\n`);
  process.exitCode = 1;
});
