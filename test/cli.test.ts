// The one executable's help: every command answers --help with its usage and exit 0, and does
// nothing else (`sim --help` once failed with "--help needs a value"; `serve --help` started the server).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, ROOT } from './helpers/build.js';

/** A DATA_DIR of the test's own: a command must never read or write the checkout's ./data. */
const DATA_DIR = mkdtempSync(join(tmpdir(), 'callbridge-cli-help-'));
afterAll(() => rmSync(DATA_DIR, { recursive: true, force: true }));

function run(args: string[]) {
  return spawnSync(process.execPath, ['dist/cli.js', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: '1', DATA_DIR },
    encoding: 'utf8',
    // A command that ignored --help and started serving would never end on its own.
    timeout: 10_000,
  });
}

beforeAll(() => buildIfStale(), 120_000);

describe('callbridge <command> --help', () => {
  it.each([
    [['sim', '--help'], /^usage: callbridge sim /],
    [['sim', '-h'], /^usage: callbridge sim /],
    [['serve', '--help'], /^usage: callbridge serve/],
    [['call', '--help'], /^usage: callbridge call /],
    [['doctor', '--help'], /^usage: callbridge doctor/],
    [['bench', '--help'], /^usage: callbridge bench /],
    [['--help'], /^usage: callbridge <command>/],
  ])('%j prints the usage and exits 0', (args, usage) => {
    const result = run(args);
    expect(result.signal).toBeNull();
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(usage);
    expect(result.stderr).toBe('');
  });

  it('refuses an unknown serve option with exit 2 instead of starting', () => {
    const result = run(['serve', '--port', '9']);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^callbridge serve: unknown option "--port"/);
  });
});
