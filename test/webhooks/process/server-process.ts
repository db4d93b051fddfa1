// Runs the real entry point (`node dist/main.js`, built by `npm run build`) as a child process,
// configured through its environment as CONTRACT.md describes, on a port picked free beforehand.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const ENTRY = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));
export const entryBuilt = existsSync(ENTRY);

/** A port nothing listens on right now: listen on 0, read it, close. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, for failure messages. */
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

const running = new Set<ServerProcess>();

export async function startServerProcess(
  env: Record<string, string>,
  readyTimeoutMs = 15_000,
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [ENTRY], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const proc: ServerProcess = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    async kill(signal) {
      running.delete(proc);
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
  running.add(proc);

  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    try {
      if ((await fetch(`${proc.url}/healthz`)).ok) return proc;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await proc.kill('SIGKILL');
      throw new Error(`server not ready within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Kills every server a test left running. */
export async function killAll(): Promise<void> {
  for (const proc of [...running]) await proc.kill('SIGKILL');
}
