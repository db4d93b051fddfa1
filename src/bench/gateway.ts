// `callbridge bench gateway`: signed webhooks per second through the webhook gateway of a real
// callbridge process, on SQLite and (with --redis) on Redis, against a bare Fastify route that does
// the same HMAC check and nothing else. After a warm-up, each target is offered webhooks at fixed
// rates (an open loop, each with its own delivery id; every answer must be a 2xx), and the sustained
// rate at which the p99 stays under 50 ms is searched for in bounded time (gateway-search.ts).
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type BenchChild, ChildSet, freePort } from './children.js';
import { processCpu } from './proc-stats.js';
import { waitHealthy } from './run.js';
import { held, searchSustainedRate, type SustainedRate } from './gateway-search.js';
import { type LatencySummary, Samples } from './samples.js';

export const GATEWAY_BENCH_USAGE = `usage: callbridge bench gateway [--step S] [--max-rate N] [--budget S] [--hold S]
                               [--redis URL] [--out FILE]

  --step S       seconds at each offered rate (default 5), after a warm-up of 1000 webhooks
  --max-rate N   the highest rate offered, webhooks per second (default 3200)
  --budget S     seconds the search may take per target, the final hold included (default 90)
  --hold S       seconds the best rate found is held to confirm it is sustained (default 10)
  --redis URL    also measure the gateway on this Redis (keys under a fresh prefix, removed after)
  --out FILE     also write the JSON result here

Offers signed webhooks at a fixed rate (open loop), doubling from 100 a second while the p99
latency stays under 50 ms, then halving the gap between the last rate held and the first that
failed down to a tenth, then holding the best rate for --hold; per target it reports the highest
rate held (\`ratePerSecondAtP99Under50Ms\`) and the sustained rate (\`sustained\`), each with its
ratio to the bare route's. Prints one JSON object (see BENCHMARKS.md) and a summary (stderr). Exit
status 1 when a request was not answered 2xx at a rate below the target's highest held.
`;

const DIST = fileURLToPath(new URL('../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'bench-gateway-secret';
const WARMUP_REQUESTS = 1_000;
const WARMUP_CONCURRENCY = 20;
const FIRST_RATE = 100;
const P99_GOAL_MS = 50;
/** Requests in flight past which a step is abandoned: the target is far past saturation. */
const MAX_IN_FLIGHT = 2_000;
const READY_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 10_000;

export interface GatewayBenchOptions {
  stepMs: number;
  maxRate: number;
  budgetMs: number;
  holdMs: number;
  redisUrl: string | null;
  out: string | null;
}

export interface GatewayStep {
  offeredPerSecond: number;
  answeredPerSecond: number;
  failed: number;
  latencyMs: LatencySummary;
  /** Server CPU time (user + system) per request, in ms. */
  serverCpuPerRequestMs: number | null;
}

export interface GatewayTargetResult {
  target: string;
  /** The highest offered rate answered in full with p99 under 50 ms; 0 when none was. */
  ratePerSecondAtP99Under50Ms: number;
  /** That rate held for --hold, and how the search ended (gateway-search.ts). */
  sustained: SustainedRate;
  steps: GatewayStep[];
  /** The first few non-2xx answers or errors, for the reader. */
  failures: string[];
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value <= 0)
    throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}

export function parseGatewayBenchArgs(args: string[]): GatewayBenchOptions {
  const { values } = parseArgs({
    args,
    options: {
      step: { type: 'string' },
      'max-rate': { type: 'string' },
      budget: { type: 'string' },
      hold: { type: 'string' },
      redis: { type: 'string' },
      out: { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const redisUrl = values.redis ?? null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl))
    throw new Error('--redis must be a redis:// or rediss:// URL');
  return {
    stepMs: Math.round(positive('step', values.step, 5) * 1000),
    maxRate: positive('max-rate', values['max-rate'], 3_200),
    budgetMs: Math.round(positive('budget', values.budget, 90) * 1000),
    holdMs: Math.round(positive('hold', values.hold, 10) * 1000),
    redisUrl,
    out: values.out ?? null,
  };
}

/** A signed `code` webhook (docs/protocols/webhook-providers.md section 3), unique per request. */
function signedWebhook(n: number): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ action: 'completed', workflow_run: { id: n, conclusion: 'success' } });
  const signature = createHmac('sha256', SECRET).update(body).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'x-code-event': 'workflow_run',
      'x-code-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${signature}`,
    },
  };
}

function post(agent: Agent, url: URL, n: number): Promise<number> {
  const { body, headers } = signedWebhook(n);
  return new Promise((resolvePost, reject) => {
    const req = request(url, { method: 'POST', agent, headers, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => resolvePost(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in time')));
    req.on('error', reject);
    req.end(body);
  });
}

interface Tally {
  samples: Samples;
  failed: number;
  failures: string[];
}

function send(agent: Agent, url: URL, n: number, tally: Tally): Promise<void> {
  const at = performance.now();
  return post(agent, url, n).then(
    (status) => {
      tally.samples.push(performance.now() - at);
      if (status >= 200 && status <= 299) return;
      tally.failed += 1;
      if (tally.failures.length < 5) tally.failures.push(`HTTP ${status}`);
    },
    (err: Error) => {
      tally.failed += 1;
      if (tally.failures.length < 5) tally.failures.push(err.message);
    },
  );
}

const newTally = (): Tally => ({ samples: new Samples(), failed: 0, failures: [] });
const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, Math.max(0, ms)));

/** Requests at a fixed rate, sent on schedule whatever the answers do (an open loop). */
async function offer(
  url: URL,
  agent: Agent,
  rate: number,
  durationMs: number,
  first: number,
): Promise<Tally> {
  const tally = newTally();
  const total = Math.round((rate * durationMs) / 1000);
  const pending = new Set<Promise<void>>();
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    if (due - performance.now() > 1) await sleep(due - performance.now());
    if (pending.size >= MAX_IN_FLIGHT) {
      tally.failed += total - i;
      if (tally.failures.length < 5) tally.failures.push(`more than ${MAX_IN_FLIGHT} requests in flight`);
      break;
    }
    const request = send(agent, url, first + i, tally);
    pending.add(request);
    void request.finally(() => pending.delete(request));
  }
  await Promise.all(pending);
  return tally;
}

async function warmUp(url: URL, agent: Agent): Promise<void> {
  const tally = newTally();
  let next = 0;
  const client = async () => {
    while (next < WARMUP_REQUESTS) await send(agent, url, next++, tally);
  };
  await Promise.all(Array.from({ length: WARMUP_CONCURRENCY }, client));
  if (tally.failed > 0) throw new Error(`the warm-up was refused: ${tally.failures.join('; ')}`);
}

/** After a failed step the target may still be working off its backlog: it gets this long to. */
const RECOVER_MS = 1_000;

async function measure(
  target: string,
  server: BenchChild,
  url: URL,
  opts: GatewayBenchOptions,
): Promise<GatewayTargetResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  const steps: GatewayStep[] = [];
  const failures: string[] = [];
  let sent = WARMUP_REQUESTS;
  const runStep = async (rate: number, durationMs: number): Promise<GatewayStep> => {
    const before = processCpu(server.pid);
    const startedAt = performance.now();
    const tally = await offer(url, agent, rate, durationMs, sent);
    const elapsedMs = performance.now() - startedAt;
    const after = processCpu(server.pid);
    sent += tally.samples.count + tally.failed;
    const cpuMs = before && after ? after.userMs + after.systemMs - (before.userMs + before.systemMs) : null;
    const step: GatewayStep = {
      offeredPerSecond: rate,
      answeredPerSecond: Math.round((tally.samples.count / elapsedMs) * 1000),
      failed: tally.failed,
      latencyMs: tally.samples.summary(),
      serverCpuPerRequestMs:
        cpuMs === null || tally.samples.count === 0
          ? null
          : Math.round((cpuMs / tally.samples.count) * 1000) / 1000,
    };
    failures.push(...tally.failures.slice(0, 5 - failures.length));
    if (!held(step, P99_GOAL_MS)) await sleep(RECOVER_MS);
    return step;
  };
  try {
    await warmUp(url, agent);
    const sustained = await searchSustainedRate(
      {
        firstRate: FIRST_RATE,
        maxRate: opts.maxRate,
        p99GoalMs: P99_GOAL_MS,
        stepMs: opts.stepMs,
        holdMs: opts.holdMs,
        budgetMs: opts.budgetMs,
      },
      runStep,
      (step) => steps.push(step),
    );
    const heldRates = steps.filter((step) => held(step, P99_GOAL_MS)).map((step) => step.offeredPerSecond);
    return {
      target,
      ratePerSecondAtP99Under50Ms: Math.max(0, ...heldRates),
      sustained,
      steps,
      failures,
    };
  } finally {
    agent.destroy();
  }
}

/** The operator gateway the events are forwarded to: answers 200 at once. */
async function startOperatorSink(): Promise<{ url: string; close(): Promise<void> }> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((ready) => sink.listen(0, '127.0.0.1', ready));
  const { port } = sink.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/events`,
    close: () => new Promise((done) => sink.close(() => done())),
  };
}

async function runCallbridge(
  children: ChildSet,
  store: 'sqlite' | 'redis',
  operatorUrl: string,
  opts: GatewayBenchOptions,
): Promise<GatewayTargetResult> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-bench-gateway-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const prefix = `callbridge-bench-${randomUUID().slice(0, 8)}:`;
  const server = children.spawn('callbridge server', process.execPath, [join(DIST, 'main.js')], {
    cwd: ROOT,
    // Only what the bench sets: nothing from the shell changes the run.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      CONFIG_DIR: join(ROOT, 'config'),
      WEBHOOK_SECRET_CODE: SECRET,
      OPERATOR_GATEWAY_URL: operatorUrl,
      OPERATOR_GATEWAY_SECRET: 'bench-operator-secret',
      ...(store === 'redis' && opts.redisUrl ? { REDIS_URL: opts.redisUrl, REDIS_KEY_PREFIX: prefix } : {}),
    },
  });
  try {
    await waitHealthy(server, base);
    return await measure(`callbridge (${store})`, server, new URL(`${base}/webhooks/code`), opts);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (store === 'redis' && opts.redisUrl) await removeKeys(opts.redisUrl, prefix);
  }
}

async function removeKeys(redisUrl: string, prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = nextCursor;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function runBaseline(children: ChildSet, opts: GatewayBenchOptions): Promise<GatewayTargetResult> {
  const server = children.fork('bare Fastify route', join(DIST, 'bench/gateway-baseline.js'), [SECRET]);
  const { port } = await server.waitFor('ready', READY_TIMEOUT_MS);
  try {
    return await measure(
      'bare Fastify route',
      server,
      new URL(`http://127.0.0.1:${port}/webhooks/code`),
      opts,
    );
  } finally {
    await server.stop();
  }
}

export async function gatewayBenchCommand(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(GATEWAY_BENCH_USAGE);
    return 0;
  }
  let opts: GatewayBenchOptions;
  try {
    opts = parseGatewayBenchArgs(args);
  } catch (err) {
    process.stderr.write(`callbridge bench gateway: ${(err as Error).message}\n${GATEWAY_BENCH_USAGE}`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`bench gateway: ${line}\n`);
  const children = new ChildSet();
  const release = children.guard(() => {});
  const sink = await startOperatorSink();
  const results: GatewayTargetResult[] = [];
  try {
    log(`signed webhooks at rising rates, ${opts.stepMs / 1000} s each, on SQLite`);
    results.push(await runCallbridge(children, 'sqlite', sink.url, opts));
    if (opts.redisUrl) {
      log('on Redis');
      results.push(await runCallbridge(children, 'redis', sink.url, opts));
    }
    log('on a bare Fastify route with the same HMAC check');
    results.push(await runBaseline(children, opts));
  } catch (err) {
    process.stderr.write(`callbridge bench gateway: ${(err as Error).message}\n`);
    return 1;
  } finally {
    children.killAll();
    release();
    await sink.close();
  }
  const baseline = results.at(-1)!;
  const rateRatio = (ours: number, theirs: number) =>
    theirs > 0 ? Math.round((ours / theirs) * 100) / 100 : null;
  const output = {
    startedAt: new Date().toISOString(),
    machine: { cores: cpus().length, memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    stepS: opts.stepMs / 1000,
    budgetS: opts.budgetMs / 1000,
    holdS: opts.holdMs / 1000,
    p99GoalMs: P99_GOAL_MS,
    targets: results,
    ratios: results.slice(0, -1).map((r) => ({
      target: r.target,
      ratePerSecondAtP99Under50Ms: rateRatio(
        r.ratePerSecondAtP99Under50Ms,
        baseline.ratePerSecondAtP99Under50Ms,
      ),
      sustainedRatePerSecond: rateRatio(r.sustained.ratePerSecond, baseline.sustained.ratePerSecond),
    })),
  };
  for (const r of results) {
    const { ratePerSecond, confirmed, stoppedBy, spentS } = r.sustained;
    const ratio =
      r === baseline
        ? ''
        : `, ${rateRatio(ratePerSecond, baseline.sustained.ratePerSecond) ?? '-'}x the bare route`;
    log(
      `${r.target}: sustained ${ratePerSecond}/s at p99 < ${P99_GOAL_MS} ms${confirmed ? '' : ' (unconfirmed)'}${ratio}; search ${stoppedBy} in ${spentS} s`,
    );
  }
  const text = `${JSON.stringify(output, null, 2)}\n`;
  process.stdout.write(text);
  if (opts.out) {
    const file = resolve(opts.out);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  // Past saturation failures are expected; a target that failed below its held rate is a defect.
  return results.every((r) =>
    r.steps.every((step) => step.failed === 0 || step.offeredPerSecond > r.ratePerSecondAtP99Under50Ms),
  )
    ? 0
    : 1;
}
