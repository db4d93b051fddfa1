// `callbridge bench console` runs end to end (a real server, a stand-in peer instance on Redis,
// consoles on the live feed) and reports the fields BENCHMARKS.md shows, with every console's view
// matching the directory. No timing thresholds: the machines CI runs on vary too much.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';
import { REDIS_URL, redisAvailable } from '../helpers/redis.js';

const hasRedis = await redisAvailable();

describe.skipIf(!hasRedis)('callbridge bench console', () => {
  let dir: string;
  beforeAll(() => {
    buildIfStale();
    dir = mkdtempSync(join(tmpdir(), 'callbridge-bench-console-test-'));
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('measures the server with 0 and C consoles, every console seeing every live call', async () => {
    const out = join(dir, 'result.json');
    const { code, stderr } = await runCli([
      'bench',
      'console',
      '--calls',
      '40',
      '--consoles',
      '3',
      '--window',
      '1',
      '--churn',
      '2',
      '--redis',
      REDIS_URL,
      '--out',
      out,
    ]);
    expect(code, stderr).toBe(0);
    const result = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
    expect(result).toMatchObject({ bench: 'console', calls: 40, consoles: 3, churnPerSecond: 2 });
    expect(result.idle).toMatchObject({ cpuPercentOfOneCore: expect.any(Number) });
    expect(result.followed).toMatchObject({ cpuPercentOfOneCore: expect.any(Number) });
    expect(result.views).toEqual([1, 2, 3].map(() => ({ calls: 40, missing: 0 })));
  }, 120_000);

  it('refuses a bad option with exit status 2', async () => {
    const { code } = await runCli(['bench', 'console', '--calls', '0']);
    expect(code).toBe(2);
  });
});
