// The fleet benchmark (BENCHMARKS.md), `callbridge bench --instances N`: the same load of simulated
// Twilio calls through the real nginx balancer (deploy/nginx/render.mjs) to one instance, to N
// instances with instance routing, and to N instances without it (media streams spread like
// webhooks). Per run: calls completed and failed, call setup latency (voice webhook sent → first
// agent audio at the phone), how each stream met its pre-warmed agent, and the instances' CPU.
// Its options are read by command.ts.
//
// The agent is a stand-in on loopback that takes `agentConfigureMs` to apply Settings (a hosted
// agent takes a few hundred ms from dial to SettingsApplied), then speaks a short greeting: that
// wait is what pre-warming hides, and what a stream landing on the wrong instance pays again. The
// phone opens the media stream `carrierDelayMs` after the webhook's answer, as a carrier does (it
// sets up the call leg first).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import WebSocket, { WebSocketServer } from 'ws';
import { startBalancer } from './fleet-balancer.js';
import { type BenchProcess, startProcess, stopProcess } from './processes.js';
import { cpuSpentMs, processCpu } from './proc-stats.js';
import { type LatencySummary, Samples } from './samples.js';

const FRAME_BYTES = 160;
const FRAME_MS = 20;
const GREETING = Buffer.alloc(FRAME_BYTES * 10, 0x55);

export interface FleetOptions {
  instances: number;
  calls: number;
  holdMs: number;
  rampMs: number;
  agentConfigureMs: number;
  carrierDelayMs: number;
  redisUrl: string;
}

/** A loopback agent: Welcome, SettingsApplied after the configure time, then a greeting. */
async function startAgent(
  configureMs: number,
): Promise<{ url: string; sessions: () => number; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let sessions = 0;
  wss.on('connection', (socket) => {
    sessions++;
    socket.send(JSON.stringify({ type: 'Welcome', request_id: `fleet-bench-${sessions}` }));
    socket.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(String(data)) as { type?: string };
      if (message.type !== 'Settings') return;
      setTimeout(() => {
        if (socket.readyState !== WebSocket.OPEN) return;
        socket.send(JSON.stringify({ type: 'SettingsApplied' }));
        socket.send(
          JSON.stringify({
            type: 'AgentStartedSpeaking',
            total_latency: 0.3,
            tts_latency: 0.1,
            ttt_latency: 0.2,
          }),
        );
        socket.send(GREETING, { binary: true });
        socket.send(JSON.stringify({ type: 'AgentAudioDone' }));
      }, configureMs);
    });
  });
  const { port } = wss.address() as { port: number };
  return {
    url: `ws://127.0.0.1:${port}`,
    sessions: () => sessions,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
}

interface CallResult {
  ok: boolean;
  setupMs: number | null;
  error?: string;
}

/** One call as Twilio places it: the voice webhook, then the media stream the answer names. */
async function placeCall(balancerUrl: string, holdMs: number, carrierDelayMs: number): Promise<CallResult> {
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  const streamSid = `MZ${randomBytes(16).toString('hex')}`;
  const startedAt = performance.now();
  const res = await fetch(`${balancerUrl}/carriers/twilio/voice`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ CallSid: callSid, From: '+15005550006', To: '+15005550001' }).toString(),
    signal: AbortSignal.timeout(10_000),
  }).catch((err: Error) => err);
  if (res instanceof Error) return { ok: false, setupMs: null, error: `webhook: ${res.message}` };
  const twiml = await res.text();
  const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  if (!streamUrl) return { ok: false, setupMs: null, error: 'declined' };
  const parameters: Record<string, string> = {};
  for (const m of twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\s*\/>/g))
    parameters[m[1]!] = m[2]!;
  await new Promise((resolve) => setTimeout(resolve, carrierDelayMs));
  return new Promise<CallResult>((resolve) => {
    const ws = new WebSocket(streamUrl.replace(/&amp;/g, '&'));
    let setupMs: number | null = null;
    let timer: NodeJS.Timeout | undefined;
    let frames = 0;
    const payload = Buffer.alloc(FRAME_BYTES, 0xff).toString('base64');
    const finish = (ok: boolean, error?: string) => {
      clearInterval(timer);
      resolve({
        ok: ok && setupMs !== null,
        setupMs,
        ...(error ? { error } : setupMs === null ? { error: 'no agent audio' } : {}),
      });
    };
    ws.on('open', () => {
      ws.send(JSON.stringify({ event: 'connected', protocol: 'Call', version: '1.0.0' }));
      ws.send(
        JSON.stringify({
          event: 'start',
          sequenceNumber: '1',
          streamSid,
          start: {
            streamSid,
            callSid,
            accountSid: `AC${'0'.repeat(32)}`,
            tracks: ['inbound'],
            mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
            customParameters: parameters,
          },
        }),
      );
      timer = setInterval(() => {
        frames++;
        if (frames * FRAME_MS >= holdMs) {
          ws.send(JSON.stringify({ event: 'stop', streamSid, stop: { callSid } }));
          clearInterval(timer);
          return;
        }
        ws.send(JSON.stringify({ event: 'media', streamSid, media: { track: 'inbound', payload } }));
      }, FRAME_MS);
    });
    ws.on('message', (data) => {
      const message = JSON.parse(String(data)) as { event?: string; mark?: unknown };
      if (message.event === 'media' && setupMs === null) setupMs = performance.now() - startedAt;
      if (message.event === 'mark') ws.send(JSON.stringify({ event: 'mark', streamSid, mark: message.mark }));
    });
    ws.on('close', () => finish(frames * FRAME_MS >= holdMs));
    ws.on('error', (err) => finish(false, `stream: ${err.message}`));
  });
}

async function metricsOf(proc: BenchProcess): Promise<string> {
  return (await fetch(`${proc.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
}

function sumMetric(text: string, name: string, label: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(label)) sum += Number(line.split(' ').pop());
  }
  return sum;
}

interface RunResult {
  instances: number;
  routing: boolean;
  prewarm: boolean;
  completedCalls: number;
  failedCalls: number;
  failures: Record<string, number>;
  setupLatencyMs: LatencySummary;
  streams: { prewarmUsed: number; otherInstance: number; noPrewarm: number; hitRate: number | null };
  prewarmReleased: number;
  agentSessions: number;
  instanceCpuSeconds: number;
}

async function run(
  opts: FleetOptions,
  instances: number,
  routing: boolean,
  prewarm = true,
): Promise<RunResult> {
  const agent = await startAgent(opts.agentConfigureMs);
  const prefix = `callbridge-bench-fleet-${randomBytes(4).toString('hex')}:`;
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-fleet-bench-'));
  const { freePort } = await import('./children.js');
  const balancerPort = await freePort();
  const procs: BenchProcess[] = [];
  try {
    const env = {
      LOG_LEVEL: 'warn',
      AGENT_URL: agent.url,
      AGENT_API_KEY: 'fleet-bench-key',
      REDIS_URL: opts.redisUrl,
      REDIS_KEY_PREFIX: prefix,
      PUBLIC_URL: `http://127.0.0.1:${balancerPort}`,
      TRUST_PROXY: '127.0.0.1',
      STREAM_TOKEN_SECRET: 'fleet-bench-stream-token-secret-000000',
      ADMIN_TOKEN: 'fleet-bench-admin-token-0123456789',
      MAX_CALLS: '100000',
      DRAIN_TIMEOUT_MS: '5000',
      AGENT_PREWARM: String(prewarm),
    };
    for (let i = 1; i <= instances; i++) {
      procs.push(
        await startProcess(`callbridge-${i}`, 'dist/main.js', {
          ...env,
          INSTANCE_ID: `bench-${i}`,
          DATA_DIR: join(dataDir, String(i)),
        }),
      );
    }
    const balancer = await startBalancer(
      procs.map((proc, i) => ({ name: `bench-${i + 1}`, address: `127.0.0.1:${proc.port}` })),
      { routing, port: balancerPort },
    );
    const cpuBefore = procs.map((p) => processCpu(p.pid));
    const results: Array<Promise<CallResult>> = [];
    for (let i = 0; i < opts.calls; i++) {
      results.push(placeCall(balancer.url, opts.holdMs, opts.carrierDelayMs));
      await new Promise((resolve) => setTimeout(resolve, opts.rampMs / opts.calls));
    }
    const calls = await Promise.all(results);
    const cpuAfter = procs.map((p) => processCpu(p.pid));
    const texts = await Promise.all(procs.map(metricsOf));
    await balancer.stop();
    const setup = new Samples();
    const failures: Record<string, number> = {};
    for (const call of calls) {
      if (call.setupMs !== null) setup.push(call.setupMs);
      if (!call.ok) failures[call.error ?? 'unknown'] = (failures[call.error ?? 'unknown'] ?? 0) + 1;
    }
    const sum = (name: string, label: string) =>
      texts.reduce((n, text) => n + sumMetric(text, name, label), 0);
    const used = sum('callbridge_stream_prewarm_total', 'outcome="used"');
    const other = sum('callbridge_stream_prewarm_total', 'outcome="other_instance"');
    const none = sum('callbridge_stream_prewarm_total', 'outcome="none"');
    const cpuMs = cpuAfter.reduce((n, after, i) => n + (cpuSpentMs(cpuBefore[i] ?? null, after) ?? 0), 0);
    return {
      instances,
      routing,
      prewarm,
      completedCalls: calls.filter((c) => c.ok).length,
      failedCalls: calls.filter((c) => !c.ok).length,
      failures,
      setupLatencyMs: setup.summary(),
      streams: {
        prewarmUsed: used,
        otherInstance: other,
        noPrewarm: none,
        hitRate: used + other + none > 0 ? Math.round((used / (used + other + none)) * 1000) / 1000 : null,
      },
      prewarmReleased: sum('callbridge_prewarm_sessions_total', 'outcome="released"'),
      agentSessions: agent.sessions(),
      instanceCpuSeconds: Math.round(cpuMs) / 1000,
    };
  } finally {
    await Promise.all(procs.map((proc) => stopProcess(proc)));
    await agent.close();
    rmSync(dataDir, { recursive: true, force: true });
    const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        for (const key of keys) await redis.del(key);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  }
}

export interface FleetReport {
  bench: 'fleet';
  load: { calls: number; holdS: number; rampS: number; agentConfigureMs: number; carrierDelayMs: number };
  machine: { cores: number; node: string };
  date: string;
  runs: RunResult[];
}

/**
 * One instance with routing, then N with routing, N without it, and N without it or pre-warming,
 * one after the other on the same load.
 */
export async function runFleetBench(opts: FleetOptions, log: (line: string) => void): Promise<FleetReport> {
  const plan = [
    { instances: 1, routing: true, prewarm: true },
    { instances: opts.instances, routing: true, prewarm: true },
    { instances: opts.instances, routing: false, prewarm: true },
    { instances: opts.instances, routing: false, prewarm: false },
  ];
  const runs: RunResult[] = [];
  for (const step of plan) {
    log(
      `${step.instances} instance(s), ${step.routing ? 'instance routing' : 'no routing'}` +
        `${step.prewarm ? '' : ', no pre-warm'}: ${opts.calls} calls`,
    );
    runs.push(await run(opts, step.instances, step.routing, step.prewarm));
  }
  return {
    bench: 'fleet',
    load: {
      calls: opts.calls,
      holdS: opts.holdMs / 1000,
      rampS: opts.rampMs / 1000,
      agentConfigureMs: opts.agentConfigureMs,
      carrierDelayMs: opts.carrierDelayMs,
    },
    machine: { cores: cpus().length, node: process.version },
    date: new Date().toISOString(),
    runs,
  };
}
