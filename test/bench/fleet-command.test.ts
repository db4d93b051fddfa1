// `callbridge bench --instances N`: the fleet benchmark behind the same command as the load
// benchmark. Its options are checked before anything starts (a bad one exits 2 with the usage), and a
// tiny run goes through the real nginx and real instances on Redis and reports the four runs.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../../src/bench/command.js';
import { findNginx } from '../../src/bench/fleet-balancer.js';
import { buildIfStale } from '../helpers/build.js';
import { runCli } from '../helpers/cli.js';
import { REDIS_URL, redisAvailable } from '../helpers/redis.js';

const canRun = findNginx() !== null && (await redisAvailable());
if (!canRun) console.warn('skipping the fleet benchmark run: it needs nginx and Redis');

describe('callbridge bench --instances options', () => {
  it('selects the fleet benchmark with its defaults', () => {
    expect(parseBenchArgs(['--instances', '3'])).toEqual({
      instances: 3,
      calls: 60,
      holdMs: 10_000,
      rampMs: 5_000,
      agentConfigureMs: 300,
      carrierDelayMs: 500,
      redisUrl: 'redis://127.0.0.1:6379',
      out: null,
    });
    expect(
      parseBenchArgs([
        '--instances=8',
        '--calls=5',
        '--duration=1.5',
        '--ramp=0',
        '--agent-configure-ms=0',
        '--carrier-delay-ms=20',
        '--redis=rediss://cache.internal:6380/2',
        '--out=fleet.json',
      ]),
    ).toEqual({
      instances: 8,
      calls: 5,
      holdMs: 1_500,
      rampMs: 0,
      agentConfigureMs: 0,
      carrierDelayMs: 20,
      redisUrl: 'rediss://cache.internal:6380/2',
      out: 'fleet.json',
    });
  });

  it.each([
    [['--instances', '1'], '--instances must be an integer from 2 to 8, got "1"'],
    [['--instances', '9'], '--instances must be an integer from 2 to 8, got "9"'],
    [['--instances', '2.5'], '--instances must be an integer from 2 to 8, got "2.5"'],
    [['--instances', 'three'], '--instances must be an integer from 2 to 8, got "three"'],
    [['--instances', ''], '--instances must be an integer from 2 to 8, got ""'],
    [['--instances', '0x3'], '--instances must be an integer from 2 to 8, got "0x3"'],
    [['--instances', '3', '--calls', '0'], '--calls must be an integer >= 1, got "0"'],
    [['--instances', '3', '--duration', '0'], '--duration must be a number >= 1, got "0"'],
    [['--instances', '3', '--ramp=-1'], '--ramp must be a number >= 0, got "-1"'],
    [
      ['--instances', '3', '--carrier-delay-ms', '1.5'],
      '--carrier-delay-ms must be an integer >= 0, got "1.5"',
    ],
    [
      ['--instances', '3', '--agent-configure-ms', 'x'],
      '--agent-configure-ms must be an integer >= 0, got "x"',
    ],
    [
      ['--instances', '3', '--redis', 'http://user:secret@cache'],
      '--redis must be a redis:// or rediss:// URL',
    ],
    [['--instances', '3', '--carrier', 'telnyx'], '--carrier does not apply to --instances'],
    [['--instances', '3', '--cpu-prof', 'profiles'], '--cpu-prof does not apply to --instances'],
    [['--instances', '3', '--no-baseline'], '--no-baseline does not apply to --instances'],
    [['--instances', '3', '--record'], '--record does not apply to --instances'],
    [['--instances', '3', '--rounds', '2'], '--rounds does not apply to --instances'],
    [['--rounds', '0'], '--rounds must be an integer >= 1, got "0"'],
    [['--rounds', '1.5'], '--rounds must be an integer >= 1, got "1.5"'],
    [['--rounds', '11'], '--rounds must be at most 10, got "11"'],
    [['--redis', 'redis://127.0.0.1:6379'], '--redis applies to --instances only'],
    [['--carrier-delay-ms', '100'], '--carrier-delay-ms applies to --instances only'],
  ])('refuses %j', (args, message) => {
    expect(() => parseBenchArgs(args)).toThrow(message);
  });

  it('takes --record for the load benchmark, off by default', () => {
    expect(parseBenchArgs(['--calls', '10', '--record'])).toMatchObject({ calls: 10, record: true });
    expect(parseBenchArgs(['--calls', '10'])).toMatchObject({ record: false });
  });

  it('takes --rounds for the load benchmark, one by default', () => {
    expect(parseBenchArgs(['--rounds', '3'])).toMatchObject({ rounds: 3 });
    expect(parseBenchArgs([])).toMatchObject({ rounds: 1 });
  });

  it('keeps a password in --redis out of its error', () => {
    expect(() => parseBenchArgs(['--instances', '3', '--redis', 'http://user:secret@cache'])).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });

  it('exits 2 with the usage on a bad option, before starting anything', async () => {
    buildIfStale();
    const run = await runCli(['bench', '--instances', '9'], 10_000);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('--instances must be an integer from 2 to 8, got "9"');
    expect(run.stderr).toContain('callbridge bench --instances N');
  });
});

describe.skipIf(!canRun)('callbridge bench --instances run', () => {
  beforeAll(() => buildIfStale(), 120_000);

  it('runs one instance and two behind nginx on the same load and reports each run', async () => {
    const run = await runCli(
      ['bench', '--instances', '2', '--calls', '2', '--duration', '1', '--ramp', '0', '--redis', REDIS_URL],
      90_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as {
      bench: string;
      load: { calls: number; holdS: number };
      runs: Array<{
        instances: number;
        routing: boolean;
        prewarm: boolean;
        completedCalls: number;
        failedCalls: number;
      }>;
    };
    expect(report.bench).toBe('fleet');
    expect(report.load).toMatchObject({ calls: 2, holdS: 1 });
    expect(report.runs.map(({ instances, routing, prewarm }) => [instances, routing, prewarm])).toEqual([
      [1, true, true],
      [2, true, true],
      [2, false, true],
      [2, false, false],
    ]);
    for (const result of report.runs) expect(result).toMatchObject({ completedCalls: 2, failedCalls: 0 });
  }, 120_000);
});
