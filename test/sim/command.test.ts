// `callbridge sim` options.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_SIM_PORT, parseSimArgs, simCommand } from '../../src/sim/agent/command.js';

describe('parseSimArgs', () => {
  it('defaults to 127.0.0.1:8090 without a scenario', () => {
    expect(parseSimArgs([])).toEqual({ host: '127.0.0.1', port: DEFAULT_SIM_PORT });
  });

  it('reads every option, keeping an explicit port 0', () => {
    expect(
      parseSimArgs(['--port', '0', '--host', '0.0.0.0', '--scenario', 'demo.json', '--max-connections', '3']),
    ).toEqual({ host: '0.0.0.0', port: 0, scenarioPath: 'demo.json', maxConnections: 3 });
  });

  it.each([['--help'], ['-h'], ['--port', '1', '--help']])('asks for the usage on %j', (...args) => {
    expect(parseSimArgs(args)).toBe('help');
  });

  it.each([
    [['--port', '80x'], /--port must be an integer/],
    [['--port', '70000'], /--port must be an integer/],
    [['--port'], /--port needs a value/],
    [['--max-connections', '0'], /--max-connections must be an integer/],
    [['--verbose', 'yes'], /unknown option --verbose/],
  ])('rejects %j', (args, message) => {
    expect(() => parseSimArgs(args)).toThrow(message);
  });
});

describe('simCommand', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  it('reports a bad option in one line with exit code 2 instead of throwing', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    await simCommand(['--scenario', '/nonexistent/scenario.json']);
    expect(process.exitCode).toBe(2);
    expect(stderr).toHaveBeenCalledWith(expect.stringMatching(/^callbridge sim: scenario .*cannot read/));
  });
});
