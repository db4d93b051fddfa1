// The process stays an ordinary citizen when its surroundings misbehave: with nobody reading its
// output it still serves and honours SIGTERM, and a port already taken stops it with one line.
import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, freePort, ROOT, status } from '../helpers/server-process.js';

/** Past this the test gives up and kills the process: a server that ignored SIGTERM. */
const EXIT_WAIT_MS = 20_000;

const children: ChildProcess[] = [];
const folders: string[] = [];
const blockers: Server[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const server of blockers.splice(0)) server.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

beforeAll(ensureBuilt, 180_000);

function start(port: number, stdio: StdioOptions): ChildProcess {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-output-'));
  folders.push(dataDir);
  const child = spawn(process.execPath, ['dist/main.js'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'debug',
    },
    stdio,
  });
  children.push(child);
  return child;
}

async function healthy(child: ChildProcess, baseUrl: string): Promise<boolean> {
  for (let attempt = 0; attempt < 200 && child.exitCode === null; attempt += 1) {
    if ((await status(baseUrl, '/healthz')) === 200) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

/** SIGTERM, then the exit; SIGKILL (and so a failed expectation) if none comes. */
async function terminate(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WAIT_MS);
  const [code, signal] = await exited;
  clearTimeout(timer);
  return { code, signal };
}

describe('with its output gone', () => {
  it('serves and exits on SIGTERM when the read end of its stdout pipe is closed', async () => {
    const port = await freePort();
    const child = start(port, ['ignore', 'pipe', 'ignore']);
    // The reader goes away before the first line: every write from now on fails with EPIPE.
    child.stdout!.destroy();
    const baseUrl = `http://127.0.0.1:${port}`;
    expect(await healthy(child, baseUrl)).toBe(true);
    // Requests log at debug level: each is a failed write the logger must shrug off.
    for (let i = 0; i < 5; i += 1) expect(await status(baseUrl, '/readyz')).toBe(200);
    expect(await terminate(child)).toEqual({ code: 0, signal: null });
  }, 60_000);

  it('serves and exits on SIGTERM when stdout and stderr refuse every write (EBADF)', async () => {
    const port = await freePort();
    const readOnly = openSync('/dev/null', 'r');
    const child = start(port, ['ignore', readOnly, readOnly]);
    closeSync(readOnly);
    const baseUrl = `http://127.0.0.1:${port}`;
    expect(await healthy(child, baseUrl)).toBe(true);
    for (let i = 0; i < 5; i += 1) expect(await status(baseUrl, '/readyz')).toBe(200);
    expect(await terminate(child)).toEqual({ code: 0, signal: null });
  }, 60_000);
});

describe('a port already in use', () => {
  it('stops the process with exit 1 and one line naming the address and the setting', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    blockers.push(blocker);
    await once(blocker, 'listening');
    const { port } = blocker.address() as { port: number };
    const child = start(port, ['ignore', 'pipe', 'pipe']);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.stdout!.resume();
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_WAIT_MS);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `callbridge: cannot listen on 127.0.0.1:${port}: the port is already in use (stop the other process, or set PORT)\n`,
    );
  }, 60_000);
});
