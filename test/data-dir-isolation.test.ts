// Every test runs the server and the CLI on a DATA_DIR of its own, never the checkout's ./data: a
// checkout that has followed the README (`npm start`, then a call) keeps another server's admin
// token and simulated-carrier keys there, and a test that read them failed (`callbridge call`
// signed with keys the server under test did not have). Each place a test starts the entry point
// or the CLI names DATA_DIR in the same call, or is listed below with the reason it need not.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/build.js';

/** Files whose starts of the entry point get their DATA_DIR another way, and how. */
const OWN_DATA_DIR_ELSEWHERE: Record<string, string> = {
  'test/bench/bench.test.ts': 'the bench starts its servers on DATA_DIRs of their own (bench-server.ts)',
  'test/bench/console.test.ts': 'the bench starts its servers on DATA_DIRs of their own (bench-server.ts)',
  'test/bench/fleet-command.test.ts': 'the fleet bench gives each instance its own DATA_DIR (fleet.ts)',
  'test/bench/gateway.test.ts': 'the gateway bench starts no server and reads no DATA_DIR',
  'test/e2e/config-exit.test.ts': 'every caller of its startServer passes a DATA_DIR',
  'test/e2e/two-servers.test.ts': 'every caller of its run() passes a DATA_DIR or a fresh cwd',
};

const ENTRY_POINT = /callbridge\.js|dist\/main\.js|dist\/cli\.js|\bCLI\b/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return testFiles(path);
    return /\.(ts|mjs)$/.test(name) ? [path] : [];
  });
}

/** The text of each child-process call in `source`, from its name to its closing parenthesis. */
function processCalls(source: string): string[] {
  const calls: string[] = [];
  for (const match of source.matchAll(/\b(spawn|spawnSync|execFile|execFileSync|fork)\(/g)) {
    let depth = 0;
    let end = match.index + match[0].length - 1;
    for (; end < source.length; end++) {
      if (source[end] === '(') depth++;
      else if (source[end] === ')' && --depth === 0) break;
    }
    calls.push(source.slice(match.index, end + 1));
  }
  return calls;
}

describe('DATA_DIR in tests', () => {
  it('every test that starts the server or the CLI gives it a DATA_DIR of its own', () => {
    const unnamed: string[] = [];
    for (const path of testFiles(join(ROOT, 'test'))) {
      const file = relative(ROOT, path);
      if (file in OWN_DATA_DIR_ELSEWHERE || file === 'test/data-dir-isolation.test.ts') continue;
      for (const call of processCalls(readFileSync(path, 'utf8'))) {
        if (ENTRY_POINT.test(call) && !call.includes('DATA_DIR'))
          unnamed.push(`${file}: ${call.slice(0, 80)}`);
      }
    }
    expect(unnamed).toEqual([]);
  });

  it('finds the starts it checks (the scan is not blind)', () => {
    const calls = processCalls(readFileSync(join(ROOT, 'test/e2e/analysis.test.ts'), 'utf8'));
    expect(calls.filter((call) => ENTRY_POINT.test(call))).toHaveLength(1);
    expect(processCalls("spawn(process.execPath, ['bin/callbridge.js', f(x)], { cwd })")).toEqual([
      "spawn(process.execPath, ['bin/callbridge.js', f(x)], { cwd })",
    ]);
  });
});
