// One measured run against one target (callbridge or the baseline relay): starts the load agent,
// the target and the load carrier as separate processes on loopback, hands them one timeline,
// samples the target's CPU and memory over the measurement window, gathers what each side sent and
// received, and kills every process before returning, whatever happened.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BenchChild, ChildSet, freePort } from './children.js';
import { wallNowMs } from './frames.js';
import { type AgentReport, type CarrierReport, loopDelayMs, type Plan } from './ipc.js';
import { type MachineCpu, machineCpu, type ProcessCpu, processCpu, processRssKB } from './proc-stats.js';
import { recordedConfigDir, storedRecordings } from './recorded-config.js';
import { LOOP_SERIES_ENV, readLoopSeries } from './loop-series.js';
import { newestProfile, type ProfileSummary, summarizeProfile } from './profile.js';
import type { LatencySummary } from './samples.js';
import { tally } from './tally.js';
import { BENCH_STREAM_TOKEN_SECRET } from './signing.js';

/** `baseline`: the bare relay (baseline-relay.ts); `sample`: the sample relay (sample-relay.ts). */
export type Target = 'callbridge' | 'baseline' | 'sample';

const RELAY_ENTRIES: Record<Exclude<Target, 'callbridge'>, { name: string; entry: string }> = {
  baseline: { name: 'baseline relay', entry: 'bench/baseline-relay.js' },
  sample: { name: 'sample relay', entry: 'bench/sample-relay.js' },
};

export interface RunOptions {
  /** The carrier the load carrier plays (a simulated carrier's dialect). */
  carrier: string;
  calls: number;
  durationMs: number;
  rampMs: number;
  /** Run the callbridge server under `node --cpu-prof`, writing the profile here. */
  cpuProfDir: string | null;
  /** Record every call of the load to the file store (`--record`; callbridge only). */
  record?: boolean;
  /** Progress lines (stderr). */
  log(line: string): void;
}

export interface TargetResult {
  completedCalls: number;
  failedCalls: number;
  /** Why calls failed: reason → calls. */
  failures: Record<string, number>;
  uplinkLatencyMs: LatencySummary;
  downlinkLatencyMs: LatencySummary;
  bargeInMs: LatencySummary;
  bytesLost: number;
  /** The part of `bytesLost` on calls that failed: a failure cut short, not loss on a working call. */
  bytesLostInFailedCalls: number;
  bytesReordered: number;
  /** Bytes received that are not an intact first copy of a frame of that call: damaged, duplicated, misaligned, or another call's. */
  bytesCorrupt: number;
  serverCpuPerCallPct: number | null;
  serverRssPerCallKB: number | null;
  traffic: {
    uplinkSentBytes: number;
    uplinkReceivedBytes: number;
    downlinkSentBytes: number;
    downlinkReceivedBytes: number;
    replies: number;
    bargeIns: number;
    clears: number;
    marksEchoed: number;
    agentConnections: number;
    agentConnectionsWithoutAudio: number;
  };
  server: {
    /** Of one core, over the window. */
    cpuPct: number | null;
    /** The kernel's part of `cpuPct`. */
    systemCpuPct: number | null;
    idleRssKB: number | null;
    /** Mean of one-second samples over the window. */
    loadRssKB: number | null;
    /**
     * Server CPU over the load generators' CPU. They do the same work for either target, so this
     * cancels the machine's own speed drifting from run to run (a shared VM's does, by ±10%).
     */
    cpuPerLoadCpu: number | null;
    /** Event-loop delay p99 over the window, beyond the 10 ms probe (callbridge: its own prom-client gauge). */
    loopDelayP99Ms: number | null;
    /** The largest event-loop delay of any second of the window (the bench's own probe, loop-series.ts). */
    loopDelayMaxMs: number | null;
    /**
     * Second by second through the window, the event-loop delay's p99 and max (loop-series.ts): work
     * that fires in bursts shows as the seconds whose max stands out.
     */
    loopDelayPerSecond: { p99Ms: number[]; maxMs: number[] };
  };
  /** CPU of the load generators and of the whole machine over the window: is the load itself the limit? */
  loadGenerators: {
    carrierCpuPct: number | null;
    agentCpuPct: number | null;
    carrierLoopDelayP99Ms: number | null;
    agentLoopDelayP99Ms: number | null;
    machineBusyPct: number | null;
    /** The machine in the second before the load, target idle: what else runs on it. */
    machineBusyBeforePct: number | null;
    /**
     * CPU (% of one core) used during the window by processes outside the run: the machine's busy
     * time less the target's and the load generators'. Well above a few percent, the run shared the
     * machine with other work and its latencies say more about that work than about the target.
     */
    otherProcessesCpuPct: number | null;
  };
  /** Voice webhook → stream `start` sent, per call. */
  setupMs: LatencySummary;
  lateStarts: number;
  /** Largest clock offset measured between this process and a load process (then corrected for). */
  clockSkewMs: number;
  /** With `--record`: the recordings the file store holds once the server stopped. */
  recordings?: { files: number; bytes: number };
  profile?: ProfileSummary;
}

const DIST = fileURLToPath(new URL('../', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const entry = (name: string) => join(DIST, name);

/** Between the ramp's last call and the window: the last calls finish setting up. */
const SETTLE_MS = 1_000;
/** After the window, before the hang-up: the last agent audio is delivered. */
const DRAIN_MS = 1_000;
const READY_TIMEOUT_MS = 20_000;
const REPORT_TIMEOUT_MS = 60_000;
const IDLE_SETTLE_MS = 1_000;
const RSS_SAMPLE_MS = 1_000;
const AGENT_API_KEY = 'bench-key';
/** The default, as deployed: the agent is dialed while the carrier opens the media stream. */
export const AGENT_PREWARM = true;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Offset of a child's clock from ours, from the fastest of a few IPC round trips. */
async function clockOffsetMs(child: BenchChild): Promise<number> {
  let best = { rtt: Number.POSITIVE_INFINITY, offset: 0 };
  for (let i = 0; i < 5; i++) {
    const sentMs = wallNowMs();
    const { wallMs } = await child.request({ type: 'clock' }, 'clock', 5_000);
    const backMs = wallNowMs();
    if (backMs - sentMs < best.rtt) best = { rtt: backMs - sentMs, offset: wallMs - (sentMs + backMs) / 2 };
  }
  return best.offset;
}

export async function waitHealthy(server: BenchChild, url: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (!server.running) throw new Error(`the callbridge server exited at start:\n${server.output.trim()}`);
    try {
      const res = await fetch(`${url}/healthz`, {
        signal: AbortSignal.timeout(1_000),
      });
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`the callbridge server did not answer /healthz within ${READY_TIMEOUT_MS} ms`);
}

/** Machine busy time over the window, in % of one core, less what the run's own processes used. */
function othersPct(stats: WindowStats, ours: Array<number | null>): number | null {
  if (stats.machineBusyPct === null || ours.some((pct) => pct === null)) return null;
  const used = ours.reduce<number>((sum, pct) => sum + (pct ?? 0), 0);
  return round(Math.max(0, stats.machineBusyPct * cpus().length - used), 1);
}

/** Share of all cores busy between two readings, in percent. */
function busyPct(start: MachineCpu | null, end: MachineCpu | null): number | null {
  if (!start || !end || end.total <= start.total) return null;
  return round(((end.busy - start.busy) / (end.total - start.total)) * 100, 1);
}

interface WindowStats {
  server: ProcessCpu | null;
  carrier: ProcessCpu | null;
  agent: ProcessCpu | null;
  machineBusyPct: number | null;
  wallMs: number;
  rssSamplesKB: number[];
  /** Event-loop delay p99 over the window, ms. */
  loopP99Ms: { server: number | null; carrier: number | null; agent: number | null };
}

interface WindowProcesses {
  server: BenchChild;
  carrier: BenchChild;
  agent: BenchChild;
  /** Where the callbridge server's metrics are; null for the relay, which answers over IPC. */
  metricsUrl: string | null;
}

/**
 * The event-loop delay p99 since the previous call. callbridge's own gauge (prom-client, reset at
 * each scrape) for the server; the bench children measure themselves.
 */
async function loopDelayP99Ms(child: BenchChild, metricsUrl: string | null): Promise<number | null> {
  try {
    if (metricsUrl === null) return round((await child.request({ type: 'loop' }, 'loop', 5_000)).p99Ms);
    const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(5_000) })).text();
    const match = /^callbridge_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? ([0-9.eE+-]+)$/m.exec(text);
    return match ? round(loopDelayMs(Number(match[1]) * 1e9)) : null;
  } catch {
    return null;
  }
}

/** CPU of each process between window start and end, and the server's RSS every second in between. */
async function sampleWindow(plan: Plan, procs: WindowProcesses): Promise<WindowStats> {
  await sleep(plan.windowStartMs - wallNowMs());
  const cpu = () => ({
    server: processCpu(procs.server.pid),
    carrier: processCpu(procs.carrier.pid),
    agent: processCpu(procs.agent.pid),
    machine: machineCpu(),
    wall: wallNowMs(),
  });
  const loops = () =>
    Promise.all([
      loopDelayP99Ms(procs.server, procs.metricsUrl),
      loopDelayP99Ms(procs.carrier, null),
      loopDelayP99Ms(procs.agent, null),
    ]);
  const start = cpu();
  await loops();
  const rssSamplesKB: number[] = [];
  while (wallNowMs() + RSS_SAMPLE_MS <= plan.windowEndMs) {
    await sleep(RSS_SAMPLE_MS);
    const rss = processRssKB(procs.server.pid);
    if (rss !== null) rssSamplesKB.push(rss);
  }
  await sleep(plan.windowEndMs - wallNowMs());
  const end = cpu();
  const [server, carrier, agent] = await loops();
  const delta = (a: ProcessCpu | null, b: ProcessCpu | null): ProcessCpu | null =>
    a === null || b === null ? null : { userMs: b.userMs - a.userMs, systemMs: b.systemMs - a.systemMs };
  const stats: WindowStats = {
    server: delta(start.server, end.server),
    carrier: delta(start.carrier, end.carrier),
    agent: delta(start.agent, end.agent),
    machineBusyPct: busyPct(start.machine, end.machine),
    wallMs: end.wall - start.wall,
    rssSamplesKB,
    loopP99Ms: { server, carrier, agent },
  };
  return stats;
}

/** The target under load: the callbridge server (`dist/main.js`, healthy) or the baseline relay (ready). */
async function startTarget(
  target: Target,
  opts: RunOptions,
  children: ChildSet,
  agentUrl: string,
  dataDir: string,
  loopSeriesFile: string,
): Promise<{ server: BenchChild; serverUrl: string }> {
  const probe = ['--import', pathToFileURL(entry('bench/loop-series.js')).href];
  if (target !== 'callbridge') {
    const relay = RELAY_ENTRIES[target];
    const server = children.fork(relay.name, entry(relay.entry), [agentUrl, AGENT_API_KEY], {
      execArgv: probe,
      env: { [LOOP_SERIES_ENV]: loopSeriesFile },
    });
    const { port } = await server.waitFor('ready', READY_TIMEOUT_MS);
    return { server, serverUrl: `http://127.0.0.1:${port}` };
  }
  const port = await freePort();
  const serverUrl = `http://127.0.0.1:${port}`;
  const nodeArgs = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
  if (opts.cpuProfDir) mkdirSync(opts.cpuProfDir, { recursive: true });
  const server = children.spawn(
    'callbridge server',
    process.execPath,
    [...nodeArgs, ...probe, entry('main.js')],
    {
      cwd: ROOT,
      // Only what the bench sets: nothing from the shell (REDIS_URL, carrier credentials) changes the run.
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: serverUrl,
        STREAM_TOKEN_SECRET: BENCH_STREAM_TOKEN_SECRET,
        AGENT_URL: agentUrl,
        AGENT_API_KEY,
        AGENT_PREWARM: String(AGENT_PREWARM),
        LOG_LEVEL: 'warn',
        MAX_CALLS: '1000000',
        DATA_DIR: dataDir,
        CONFIG_DIR: opts.record
          ? recordedConfigDir(join(ROOT, 'config'), join(dataDir, 'config'))
          : join(ROOT, 'config'),
        ...(opts.record ? { RECORDING_STORE: 'file' } : {}),
        DRAIN_TIMEOUT_MS: '5000',
        [LOOP_SERIES_ENV]: loopSeriesFile,
      },
    },
  );
  await waitHealthy(server, serverUrl);
  return { server, serverUrl };
}

export async function runTarget(target: Target, opts: RunOptions): Promise<TargetResult> {
  const children = new ChildSet();
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-bench-'));
  const removeDataDir = () => rmSync(dataDir, { recursive: true, force: true });
  const release = children.guard(removeDataDir);
  try {
    const agent = children.fork('load agent', entry('bench/load-agent.js'));
    const { port: agentPort } = await agent.waitFor('ready', READY_TIMEOUT_MS);
    const agentUrl = `ws://127.0.0.1:${agentPort}`;

    // The second-by-second loop probe, loaded into whichever server is measured.
    const loopSeriesFile = join(dataDir, 'loop-series.jsonl');
    const { server, serverUrl } = await startTarget(
      target,
      opts,
      children,
      agentUrl,
      dataDir,
      loopSeriesFile,
    );

    const carrier = children.fork('load carrier', entry('bench/load-carrier.js'));
    await carrier.waitFor('ready', READY_TIMEOUT_MS);
    const agentOffsetMs = await clockOffsetMs(agent);
    const carrierOffsetMs = await clockOffsetMs(carrier);
    const clockSkewMs = round(Math.max(Math.abs(agentOffsetMs), Math.abs(carrierOffsetMs)), 3);

    const beforeIdle = machineCpu();
    await sleep(IDLE_SETTLE_MS);
    const idleRssKB = processRssKB(server.pid);
    const afterIdle = machineCpu();

    const startAtMs = wallNowMs() + 500;
    const windowStartMs = startAtMs + opts.rampMs + SETTLE_MS;
    const windowEndMs = windowStartMs + opts.durationMs;
    const plan: Plan = {
      calls: opts.calls,
      startAtMs,
      rampMs: opts.rampMs,
      windowStartMs,
      windowEndMs,
      quietAtMs: windowEndMs,
      stopAtMs: windowEndMs + DRAIN_MS,
    };
    agent.send({ type: 'plan', plan, clockOffsetMs: agentOffsetMs });
    const totalMs = plan.stopAtMs - wallNowMs();
    opts.log(
      `${target}: ${opts.calls} calls, ramp ${opts.rampMs / 1000} s, window ${opts.durationMs / 1000} s`,
    );
    const carrierDone = carrier.request(
      { type: 'run', serverUrl, carrier: opts.carrier, plan, clockOffsetMs: carrierOffsetMs },
      'report',
      totalMs + REPORT_TIMEOUT_MS,
    );
    // Awaited below; until then a failure elsewhere must not leave its rejection unhandled.
    carrierDone.catch(() => {});
    const windowStats = await sampleWindow(plan, {
      server,
      carrier,
      agent,
      metricsUrl: target === 'callbridge' ? `${serverUrl}/metrics` : null,
    });
    const carrierReport = (await carrierDone).report as CarrierReport;
    const agentReport = (await agent.request({ type: 'report' }, 'report', REPORT_TIMEOUT_MS))
      .report as AgentReport;
    await children.stopAll();

    const result = tally(opts.calls, carrierReport, agentReport, plan);
    const loopSeconds = readLoopSeries(loopSeriesFile, plan.windowStartMs, plan.windowEndMs);
    const pct = (ms: number) => round((ms / windowStats.wallMs) * 100, 1);
    const cpuPct = (cpu: ProcessCpu | null) => (cpu === null ? null : pct(cpu.userMs + cpu.systemMs));
    const rss = windowStats.rssSamplesKB;
    const loadRssKB = rss.length > 0 ? Math.round(rss.reduce((a, b) => a + b, 0) / rss.length) : null;
    const serverCpuPct = cpuPct(windowStats.server);
    const carrierCpuPct = cpuPct(windowStats.carrier);
    const agentCpuPct = cpuPct(windowStats.agent);
    const loadCpuPct = carrierCpuPct === null || agentCpuPct === null ? null : carrierCpuPct + agentCpuPct;
    const full: TargetResult = {
      ...result,
      serverCpuPerCallPct: serverCpuPct === null ? null : round(serverCpuPct / opts.calls, 4),
      serverRssPerCallKB:
        loadRssKB === null || idleRssKB === null ? null : round((loadRssKB - idleRssKB) / opts.calls, 1),
      server: {
        cpuPct: serverCpuPct,
        systemCpuPct: windowStats.server === null ? null : pct(windowStats.server.systemMs),
        idleRssKB,
        loadRssKB,
        cpuPerLoadCpu: serverCpuPct === null || !loadCpuPct ? null : round(serverCpuPct / loadCpuPct, 3),
        loopDelayP99Ms: windowStats.loopP99Ms.server,
        loopDelayMaxMs: loopSeconds.length === 0 ? null : Math.max(...loopSeconds.map((s) => s.maxMs)),
        loopDelayPerSecond: {
          p99Ms: loopSeconds.map((s) => s.p99Ms),
          maxMs: loopSeconds.map((s) => s.maxMs),
        },
      },
      loadGenerators: {
        carrierCpuPct,
        agentCpuPct,
        carrierLoopDelayP99Ms: windowStats.loopP99Ms.carrier,
        agentLoopDelayP99Ms: windowStats.loopP99Ms.agent,
        machineBusyPct: windowStats.machineBusyPct,
        machineBusyBeforePct: busyPct(beforeIdle, afterIdle),
        otherProcessesCpuPct: othersPct(windowStats, [serverCpuPct, carrierCpuPct, agentCpuPct]),
      },
      setupMs: carrierReport.setupMs,
      lateStarts: carrierReport.lateStarts,
      clockSkewMs,
    };
    if (target === 'callbridge' && opts.record) full.recordings = storedRecordings(dataDir);
    if (target === 'callbridge' && opts.cpuProfDir) {
      const file = newestProfile(opts.cpuProfDir);
      if (file) full.profile = summarizeProfile(file, ROOT);
    }
    return full;
  } finally {
    release();
    children.killAll();
    removeDataDir();
  }
}
