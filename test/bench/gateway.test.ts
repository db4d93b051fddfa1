// `callbridge bench gateway` runs end to end: a real callbridge process on SQLite and on Redis, and
// the bare route, each offered signed webhooks that must all be answered 2xx; the report carries
// every field BENCHMARKS.md shows. No timing thresholds: the machines CI runs on vary too much.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, ROOT } from '../helpers/build.js';
import { REDIS_URL } from '../helpers/redis.js';

const CLI = join(ROOT, 'bin', 'callbridge.js');

async function cli(args: string[]) {
  const child = spawn(process.execPath, [CLI, 'bench', 'gateway', ...args], {
    cwd: ROOT,
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
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

beforeAll(() => buildIfStale());

describe('callbridge bench gateway', () => {
  it('offers signed webhooks to the gateway on SQLite, on Redis and to the bare route, all accepted', async () => {
    const run = await cli(['--step', '0.5', '--max-rate', '100', '--hold', '0.5', '--redis', REDIS_URL]);
    expect(run.stderr).toContain('on Redis');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      targets: Array<{ target: string; steps: Array<Record<string, unknown>>; failures: string[] }>;
      ratios: Array<{ target: string }>;
    };
    expect(report.targets.map((t) => t.target)).toEqual([
      'callbridge (sqlite)',
      'callbridge (redis)',
      'bare Fastify route',
    ]);
    for (const target of report.targets) {
      // One step at 100 a second for half a second: 50 webhooks, every one answered 2xx.
      expect(target.steps).toEqual([
        {
          offeredPerSecond: 100,
          answeredPerSecond: expect.any(Number),
          failed: 0,
          latencyMs: { count: 50, p50: expect.any(Number), p99: expect.any(Number), max: expect.any(Number) },
          serverCpuPerRequestMs: expect.any(Number),
        },
      ]);
      expect(target.failures).toEqual([]);
    }
    expect(report.ratios.map((r) => r.target)).toEqual(['callbridge (sqlite)', 'callbridge (redis)']);
    // The sustained rate: searched for, in bounded time, with its ratio to the bare route's.
    for (const target of report.targets as unknown as Array<{ sustained: Record<string, unknown> }>) {
      expect(target.sustained).toMatchObject({
        ratePerSecond: expect.any(Number),
        confirmed: expect.any(Boolean),
        stoppedBy: expect.stringMatching(/^(converged|max-rate|budget)$/),
        spentS: expect.any(Number),
      });
    }
    for (const ratio of report.ratios) expect(ratio).toHaveProperty('sustainedRatePerSecond');
    expect(run.stderr).toMatch(/callbridge \(sqlite\): sustained \d+\/s at p99 < 50 ms/);
  }, 90_000);

  it('refuses a bad option with the usage and exit status 2', async () => {
    const run = await cli(['--step', '0']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--step must be a positive number, got "0"');
    expect(run.stderr).toContain('usage: callbridge bench gateway');
    const redis = await cli(['--redis', 'http://nope']);
    expect(redis.code).toBe(2);
    expect(redis.stderr).toContain('--redis must be a redis:// or rediss:// URL');
  });
});
