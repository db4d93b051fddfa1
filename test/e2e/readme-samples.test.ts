// Every sample output in README.md is what the commands print: each block marked
// `<!-- sample: NAME -->` is checked against a real run of the command the README gives, against a
// real server, and holds every line of the output (the doctor sample once showed 3 of its 9). A block
// marked `<!-- excerpt: NAME -->` may leave lines out (a campaign's progress lines vary with
// timing), but every line it shows must come, in that order, from the run. Ids, numbers, times,
// the data folder and the checkout's folder may differ, nothing else.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

interface Sample {
  lines: string[];
  /** The whole output (`sample`), or lines of it in order (`excerpt`). */
  whole: boolean;
}

/** The sample blocks by name. */
function samples(): Map<string, Sample> {
  const found = new Map<string, Sample>();
  for (const match of readme.matchAll(/<!-- (sample|excerpt): (\w+) -->\s*```\n([\s\S]*?)\n```/g))
    found.set(match[2]!, { lines: match[3]!.split('\n'), whole: match[1] === 'sample' });
  return found;
}

/**
 * What the run printed that the sample does not show, and the sample lines the run did not print.
 * A whole sample holds the same lines as the run, as many of each; their order is not compared, as
 * two events of one instant (a transcript line and its audio starting) print in either order.
 */
function differences(name: string, output: string, dataDir: string): string[] {
  const sample = samples().get(name)!;
  if (!sample.whole) return missing(sample.lines, output, dataDir);
  const unshown = output
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => normalize(line, dataDir));
  const problems: string[] = [];
  for (const line of sample.lines) {
    const at = unshown.indexOf(normalize(line, dataDir));
    if (at === -1) problems.push(`in the README, not printed: ${line}`);
    else unshown.splice(at, 1);
  }
  for (const line of unshown) problems.push(`printed, not in the README: ${line}`);
  return problems;
}

/** What may differ between two runs: ids, numbers, and where the data folder is. */
function normalize(line: string, dataDir: string): string {
  return line
    .split(dataDir)
    .join('<data>')
    .replace(/\/home\/you\/callbridge\/data/g, '<data>')
    .split(ROOT)
    .join('<root>/')
    .replace(/\/home\/you\/callbridge\//g, '<root>/')
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

async function run(
  args: string[],
  opts: { cwd?: string; dataDir?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'callbridge.js'), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: new URL(server.baseUrl).port,
      DATA_DIR: opts.dataDir ?? server.dataDir,
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
    // The README's command as it is: no --server (PORT names this server's port), and --out
    // relative to where it runs, here the server's data folder.
    const { code, stdout, stderr } = await run(commandIn('npx callbridge call'), { cwd: server.dataDir });
    expect(code, stderr).toBe(0);
    expect(differences('call', stdout, server.dataDir), stdout).toEqual([]);
  }, 90_000);

  it('shows what the first campaign prints', async () => {
    // The README's command, with no wait before retries so the test ends sooner.
    const { code, stdout, stderr } = await run([
      ...commandIn('npx callbridge campaign run'),
      '--retry-delay',
      '0',
    ]);
    expect(code, stderr).toBe(0);
    expect(differences('campaign', stdout, server.dataDir), stdout).toEqual([]);
  }, 180_000);

  it('shows what `npx callbridge doctor` prints with nothing configured', async () => {
    // Nothing configured: a data folder no server has used yet.
    const fresh = mkdtempSync(join(tmpdir(), 'callbridge-doctor-'));
    try {
      const { stdout } = await run(['doctor'], { dataDir: fresh });
      expect(differences('doctor', stdout, fresh), stdout).toEqual([]);
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 60_000);

  it('compares whole samples line for line: a line left out is found', () => {
    expect(differences('doctor', 'ok   one line\n', '/nowhere')).not.toEqual([]);
  });
});
