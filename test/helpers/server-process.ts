// The real entry point as operators run it: `node dist/main.js` in a child process with a clean
// environment, on a free loopback port, with its output kept (bounded) for failure messages.
// Every process a test starts is remembered, so `disposeAll()` in an afterEach leaves none behind.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale, ROOT } from './build.js';
import { freePort } from './free-port.js';

export { freePort, ROOT };
/** Output kept per stream: the tail is what explains a failure. */
const OUTPUT_TAIL_CHARS = 64 * 1024;
const HEALTH_TIMEOUT_MS = 20_000;
/** Test files run in parallel workers; one build of this checkout at a time, so no process starts from a half-written dist. */
const BUILD_LOCK = join(
  tmpdir(),
  `callbridge-build-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}.lock`,
);
const BUILD_LOCK_WAIT_MS = 120_000;
/** A lock this old was left by a run that was killed mid-build. */
const BUILD_LOCK_STALE_MS = 5 * 60_000;

/** Builds dist/ when it is missing or older than src/, one test file at a time. */
export async function ensureBuilt(): Promise<void> {
  const deadline = Date.now() + BUILD_LOCK_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch {
      const held = statSync(BUILD_LOCK, { throwIfNoEntry: false });
      if (held !== undefined && Date.now() - held.mtimeMs > BUILD_LOCK_STALE_MS) {
        rmSync(BUILD_LOCK, { recursive: true, force: true });
      }
      if (Date.now() > deadline) throw new Error(`build lock ${BUILD_LOCK} held for too long`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    buildIfStale();
  } finally {
    rmdirSync(BUILD_LOCK);
  }
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when the exit was seen. */
  atMs: number;
}

export interface ServerProcess {
  child: ChildProcess;
  pid: number;
  baseUrl: string;
  dataDir: string;
  exited: Promise<Exit>;
  /** The last lines the server wrote, for failure messages. */
  output(): string;
  /** Log lines at level error or above (the first few, cut short), and how many there were. */
  errorLogs(): { count: number; first: string[] };
  /** Resident set size of the server, from /proc/<pid>/status, in bytes. */
  rssBytes(): number;
  /** Sends `signal` (if the process still runs) and waits for it to exit. */
  kill(signal: NodeJS.Signals): Promise<Exit>;
  /** Kills the process if it still runs and removes the data folder made for it (not one a test named). */
  dispose(): Promise<void>;
}

const running = new Set<ServerProcess>();

/** Disposes of every server a test left running. */
export async function disposeAll(): Promise<void> {
  await Promise.all([...running].map((server) => server.dispose()));
}

export interface SpawnOptions {
  /** How long the server may take to answer /healthz. */
  readyTimeoutMs?: number;
  /** The port to listen on (a restart at the same address); a free one by default. */
  port?: number;
}

/** What the server says when its port was taken (main.ts, LISTEN_FAILURES). */
const PORT_TAKEN = /cannot listen on [^ ]+: the port is already in use/;

export async function spawnServer(
  env: Record<string, string>,
  opts: SpawnOptions = {},
): Promise<ServerProcess> {
  // A free port is found by binding it and letting it go: another test's process may take it
  // before the server listens. A port chosen here is chosen again then; one the caller fixed is not.
  for (let attempt = 1; ; attempt++) {
    const port = opts.port ?? (await freePort());
    try {
      return await spawnAt(env, port, opts);
    } catch (err) {
      if (opts.port !== undefined || attempt >= 3 || !PORT_TAKEN.test((err as Error).message)) throw err;
    }
  }
}

async function spawnAt(
  env: Record<string, string>,
  port: number,
  opts: SpawnOptions,
): Promise<ServerProcess> {
  // Its own DATA_DIR unless the test names one (a restart, a second server on the same one).
  const ownDir = mkdtempSync(join(tmpdir(), 'callbridge-process-'));
  const dataDir = env.DATA_DIR ?? ownDir;
  const baseUrl = `http://127.0.0.1:${port}`;
  // A clean environment: nothing from the developer's shell (AGENT_URL, NODE_ENV…) leaks in.
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: ownDir,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (text: string) => {
    out += text;
    if (out.length > 2 * OUTPUT_TAIL_CHARS) out = out.slice(-OUTPUT_TAIL_CHARS);
  };
  const errors = { count: 0, first: [] as string[] };
  let partial = '';
  const scan = (text: string) => {
    const lines = (partial + text).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!/"level":(5|6)\d/.test(line)) continue;
      errors.count += 1;
      if (errors.first.length < 5) errors.first.push(line.slice(0, 400));
    }
  };
  // Both pipes are always read: a full pipe would block the server's synchronous logging.
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    keep(text);
    scan(text);
  });
  child.stderr?.setEncoding('utf8').on('data', keep);
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal, atMs: performance.now() }));
  });
  const server: ServerProcess = {
    child,
    pid: child.pid!,
    baseUrl,
    dataDir,
    exited,
    output: () => out.slice(-OUTPUT_TAIL_CHARS),
    errorLogs: () => ({ count: errors.count, first: [...errors.first] }),
    rssBytes: () => readRss(child.pid!),
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    dispose: async () => {
      running.delete(server);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
      rmSync(ownDir, { recursive: true, force: true });
    },
  };
  running.add(server);
  try {
    await waitForHealth(server, opts.readyTimeoutMs ?? HEALTH_TIMEOUT_MS);
  } catch (err) {
    await server.dispose();
    throw new Error(`${(err as Error).message}\n--- server output ---\n${server.output()}`);
  }
  return server;
}

async function waitForHealth(server: ServerProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`the server exited with ${server.child.exitCode}`);
    if ((await status(server.baseUrl, '/healthz')) === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not answer /healthz within ${timeoutMs} ms`);
}

/** The HTTP status of a GET, or 0 when no answer came (refused, reset, or a 10 s silence). */
export async function status(baseUrl: string, path: string): Promise<number> {
  try {
    const res = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

function readRss(pid: number): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(text)?.[1];
  if (kb === undefined) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb) * 1024;
}

/** Sum of the series of a Prometheus counter or gauge in a text exposition, those with `label` if given. */
export function metricSum(exposition: string, name: string, label?: string): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (label !== undefined && !line.includes(label)) continue;
    sum += Number(line.split(' ').pop());
  }
  return sum;
}

export async function metrics(baseUrl: string): Promise<string> {
  const res = await fetch(`${baseUrl}/metrics`, {
    signal: AbortSignal.timeout(10_000),
  });
  return res.text();
}
