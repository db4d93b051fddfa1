// The built server (`dist/main.js`) as a bench command runs it: a fresh data folder, a free port on
// loopback, only the environment the bench gives (nothing from the shell changes the run), its
// stderr shown.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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
