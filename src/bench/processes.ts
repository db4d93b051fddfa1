// Processes of the fleet and gateway benchmarks: callbridge as deployed (`node dist/main.js`) or
// another script of dist/, each on a free loopback port, awaited until it answers, stopped at the
// end. Every one started is remembered so that one call stops them all, on errors too.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './children.js';

/** The package root: dist/bench sits two levels below it. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TAIL_CHARS = 4000;

export interface BenchProcess {
  name: string;
  port: number;
  url: string;
  pid: number;
  child: ChildProcess;
  output(): string;
}

const started = new Set<BenchProcess>();

/** Starts `node <script>` (relative to the package root) with `env` and PORT; resolves once `readyPath` answers 200. */
export async function startProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  readyPath = '/healthz',
): Promise<BenchProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [script], {
    cwd: PACKAGE_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const proc: BenchProcess = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    child,
    output: () => tail,
  };
  started.add(proc);
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${tail}`);
    const ok = await fetch(`${proc.url}${readyPath}`, { signal: AbortSignal.timeout(1_000) })
      .then((res) => res.status === 200)
      .catch(() => false);
    if (ok) return proc;
    if (Date.now() > deadline) throw new Error(`${name} did not answer ${readyPath}:\n${tail}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Stops one process: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopProcess(proc: BenchProcess, graceMs = 5_000): Promise<void> {
  started.delete(proc);
  const { child } = proc;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export async function stopAll(): Promise<void> {
  await Promise.all([...started].map((proc) => stopProcess(proc)));
}
