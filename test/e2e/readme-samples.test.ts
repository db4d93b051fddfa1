// Every sample output in README.md is what the commands print: each block marked
// `<!-- sample: NAME -->` is checked against a real run of the command the README gives, against a
// real server. A sample may leave lines out (the README shows the ones worth reading) but every
// line it shows must come, in that order, from the run; ids, numbers, times and the data folder
// may differ, nothing else.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The sample blocks by name. */
function samples(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const match of readme.matchAll(/<!-- sample: (\w+) -->\s*```\n([\s\S]*?)\n```/g))
    found.set(match[1]!, match[2]!.split('\n'));
  return found;
}

/** What may differ between two runs: ids, numbers, and where the data folder is. */
function normalize(line: string, dataDir: string): string {
  return line
    .split(dataDir)
    .join('<data>')
    .replace(/\/home\/you\/callbridge\/data/g, '<data>')
    .replace(/\b(MZ|CA)[0-9a-f]{32}\b/g, '<id>')
    .replace(/\bcmp_[0-9a-f]{20}\b/g, '<id>')
    .replace(/\d+(\.\d+)?/g, '#')
    .trimEnd();
}

/** The sample's lines that do not appear, in order, among the run's. */
function missing(sample: string[], output: string, dataDir: string): string[] {
  const lines = output.split('\n').map((line) => normalize(line, dataDir));
  const absent: string[] = [];
  let at = 0;
  for (const line of sample) {
    const wanted = normalize(line, dataDir);
    const found = lines.indexOf(wanted, at);
    if (found === -1) absent.push(line);
    else at = found + 1;
  }
  return absent;
}

/** The README's command line that starts with `prefix`, as words. */
function commandIn(prefix: string): string[] {
  const line = readme.split('\n').find((text) => text.startsWith(prefix));
  if (!line) throw new Error(`README has no command starting with ${prefix}`);
  return line.split(/\s+/).slice(2);
}

let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  // The simulated callees wait 100 times less than real ones: the campaign ends in seconds.
  server = await spawnServer({ SIM_CALLEE_SPEEDUP: '100' });
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});

async function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['bin/callbridge.js', ...args], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: new URL(server.baseUrl).port,
      DATA_DIR: server.dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('the README sample outputs', () => {
  it('has the samples this test checks', () => {
    expect([...samples().keys()].sort()).toEqual(['call', 'campaign', 'doctor']);
  });

  it('shows what `npx callbridge call` prints', async () => {
    const args = commandIn('npx callbridge call').filter(
      (arg, i, all) => arg !== '--out' && all[i - 1] !== '--out',
    );
    // The README's server is on port 8080; this one is on a free port.
    const out = join(server.dataDir, 'reply.wav');
    const { code, stdout, stderr } = await run([...args, '--out', out, '--server', server.baseUrl]);
    expect(code, stderr).toBe(0);
    expect(missing(samples().get('call')!, stdout, server.dataDir), stdout).toEqual([]);
  }, 90_000);

  it('shows what the first campaign prints', async () => {
    // The README's command, with no wait before retries so the test ends sooner.
    const { code, stdout, stderr } = await run([
      ...commandIn('npx callbridge campaign run'),
      '--retry-delay',
      '0',
    ]);
    expect(code, stderr).toBe(0);
    expect(missing(samples().get('campaign')!, stdout, server.dataDir), stdout).toEqual([]);
  }, 180_000);

  it('shows what `npx callbridge doctor` prints with nothing configured', async () => {
    const { stdout } = await run(['doctor']);
    expect(missing(samples().get('doctor')!, stdout, server.dataDir), stdout).toEqual([]);
  }, 60_000);
});
