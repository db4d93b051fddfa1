// The built server (`dist/main.js`) as a bench command runs it: a fresh data folder, a free port on
// loopback, only the environment the bench gives (nothing from the shell changes the run), its
// stderr shown; waited for until healthy, asked as an administrator, stopped and its folder removed.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './children.js';

const DIST = fileURLToPath(new URL('../', import.meta.url));

export interface BenchServer {
  server: ChildProcess;
  base: string;
  dataDir: string;
}

export async function spawnBenchServer(label: string, env: Record<string, string>): Promise<BenchServer> {
  const dataDir = mkdtempSync(join(tmpdir(), `callbridge-bench-${label}-`));
  const port = await freePort();
  const server = spawn(process.execPath, [join(DIST, 'main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ANALYSIS: 'off',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return { server, base: `http://127.0.0.1:${port}`, dataDir };
}

/** Resolves once `/healthz` answers 2xx; throws when the server exits first or is not healthy in time. */
export async function waitForHealthz(
  { server, base }: BenchServer,
  timeoutMs = 20_000,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (server.exitCode !== null) throw new Error('the server exited at start');
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error('the server did not become healthy');
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * A request to the server's `/v1` API with the admin token: a GET without a body, a POST with one
 * (a string as it is, anything else as JSON). The JSON answer; throws on a status other than 2xx.
 */
export type BenchAdmin = (path: string, body?: unknown, type?: string) => Promise<Record<string, unknown>>;

export function benchAdmin(base: string, token: string): BenchAdmin {
  return async (path, body, type = 'application/json') => {
    const res = await fetch(`${base}/v1${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
}

/** Stops the server if it still runs (SIGTERM, then its exit) and removes its data folder. */
export async function stopBenchServer({ server, dataDir }: BenchServer): Promise<void> {
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  }
  rmSync(dataDir, { recursive: true, force: true });
}
