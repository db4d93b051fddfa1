// A second server on the DATA_DIR of a running one breaks nothing: on the same port it fails before
// writing anything there, on another port it keeps to keys of its own, and `callbridge call` signs
// with the keys of the very server it calls, or says exactly why it cannot (a checkout whose
// ./data holds keys of another server, as after `npm start` and a call).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { simulationKeysFor } from '../../src/carriers/simulation-keys.js';
import { writeSimulationKeys } from '../../src/sim/carrier/simulation-keys-file.js';
import { disposeAll, ensureBuilt, ROOT, spawnServer } from '../helpers/server-process.js';

const CLI = join(ROOT, 'bin', 'callbridge.js');
let dirs: string[] = [];

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterEach(async () => {
  await disposeAll();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

/** Every file under `dir` with its size and modification time: what a write would change. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      // The running server's own database files change as it works: not the second process's doing.
      else if (!entry.name.startsWith('callbridge.db')) {
        const stat = statSync(path);
        files[path] = `${stat.size}@${stat.mtimeMs}`;
      }
    }
  };
  walk(dir);
  return files;
}

async function run(
  command: string,
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [command, ...args], {
    cwd: opts.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * A short simulated call: no hold, no analysis. The caller waits for the greeting: one that spoke at
 * once could cut the greeting before any of it was heard, and the CLI counts that call as failed.
 */
function call(server: string, opts: { cwd: string; env: Record<string, string> }) {
  return run(CLI, ['call', '--server', server, '--hold-ms', '0', '--no-analysis'], opts);
}

describe('two servers on one DATA_DIR', () => {
  it('the second on the same port fails before writing, and the first keeps taking signed calls', async () => {
    const first = await spawnServer({});
    const port = new URL(first.baseUrl).port;
    const keysFile = join(first.dataDir, 'simulated-carrier', `keys-${port}.json`);
    const keys = readFileSync(keysFile, 'utf8');
    const before = snapshot(first.dataDir);

    const second = await run('dist/main.js', [], {
      cwd: ROOT,
      env: { PORT: port, HOST: '127.0.0.1', DATA_DIR: first.dataDir },
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toBe(
      `callbridge: cannot listen on 127.0.0.1:${port}: the port is already in use (stop the other process, or set PORT)\n`,
    );
    expect(snapshot(first.dataDir)).toEqual(before);
    expect(readFileSync(keysFile, 'utf8')).toBe(keys);

    const placed = await call(first.baseUrl, { cwd: ROOT, env: { DATA_DIR: first.dataDir } });
    expect(placed.code, placed.stdout + placed.stderr).toBe(0);
    expect(placed.stdout.split('\n')[0]).toContain(
      `(twilio, signed, with the simulated carrier's keys in ${keysFile})`,
    );
  }, 90_000);

  it('a second on another port keeps keys of its own: each server takes calls signed with its keys', async () => {
    const first = await spawnServer({});
    const firstKeys = join(first.dataDir, 'simulated-carrier', `keys-${new URL(first.baseUrl).port}.json`);
    const keys = readFileSync(firstKeys, 'utf8');
    const second = await spawnServer({ DATA_DIR: first.dataDir });
    const secondKeys = join(first.dataDir, 'simulated-carrier', `keys-${new URL(second.baseUrl).port}.json`);
    expect(readFileSync(firstKeys, 'utf8')).toBe(keys);
    expect(readFileSync(secondKeys, 'utf8')).not.toBe(keys);

    for (const [server, file] of [
      [first, firstKeys],
      [second, secondKeys],
    ] as const) {
      const placed = await call(server.baseUrl, { cwd: ROOT, env: { DATA_DIR: first.dataDir } });
      expect(placed.code, placed.stdout + placed.stderr).toBe(0);
      expect(placed.stdout.split('\n')[0]).toContain(`signed, with the simulated carrier's keys in ${file})`);
    }
  }, 120_000);

  it("a checkout whose ./data holds another server's keys places the call unsigned, and says why", async () => {
    const server = await spawnServer({});
    // As a checkout that ran `npm start` and a call: keys of a server that is not this one, on this
    // very port, and the single file older versions wrote.
    const checkout = mkdtempSync(join(tmpdir(), 'callbridge-checkout-'));
    dirs.push(checkout);
    const port = Number(new URL(server.baseUrl).port);
    writeSimulationKeys(join(checkout, 'data'), port, simulationKeysFor('another server'), ['twilio']);
    mkdirSync(join(checkout, 'data'), { recursive: true });
    writeFileSync(join(checkout, 'data', 'simulation-keys'), '{"keys":{},"carriers":["twilio"]}\n');

    const placed = await call(server.baseUrl, {
      cwd: checkout,
      env: { TWILIO_AUTH_TOKEN: 'not-the-servers' },
    });
    expect(placed.code, placed.stdout + placed.stderr).toBe(0);
    expect(placed.stdout.split('\n')[0]).toContain(
      `(twilio, unsigned: the server checks twilio against its simulated carrier's keys, ` +
        `and ${join(checkout, 'data')} holds none of them (set DATA_DIR to the server's))`,
    );
  }, 90_000);
});
