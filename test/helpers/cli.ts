// The `callbridge` command as a user runs it (bin/callbridge.js, from the repository root): what it
// printed and how it exited. Tests of process behaviour spawn it rather than call into src/.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './build.js';

export const CLI = join(ROOT, 'bin', 'callbridge.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `callbridge <args>` on a DATA_DIR of its own (never the checkout's); after `timeoutMs`, if
 * given, sends SIGTERM so it can stop what it started.
 */
export async function runCli(args: string[], timeoutMs?: number): Promise<CliRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-cli-'));
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGTERM'), timeoutMs);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  rmSync(dataDir, { recursive: true, force: true });
  return { code, stdout, stderr };
}
