// The one executable's help: every command answers --help with its usage and exit 0, and does
// nothing else (`sim --help` once failed with "--help needs a value"; `serve --help` started the server).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildIfStale, ROOT } from './helpers/build.js';
import { freePort } from './helpers/free-port.js';

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
    [['bench', 'campaign', '--help'], /^usage: callbridge bench campaign /],
    [['bench', 'upload', '--help'], /^usage: callbridge bench upload /],
    [['bench', 'console', '--help'], /^usage: callbridge bench console /],
    [['bench', 'gateway', '--help'], /^usage: callbridge bench gateway /],
    [['campaign', '--help'], /^usage: callbridge campaign /],
    [['keys', '--help'], /^usage: callbridge keys /],
    [['keys', '-h'], /^usage: callbridge keys /],
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

  // `call --help` once listed its flags with no word on any; `serve --help` named a README section
  // that did not exist.
  it.each([
    ['serve'],
    ['sim'],
    ['call'],
    ['doctor'],
    ['bench'],
    ['bench', 'campaign'],
    ['bench', 'upload'],
    ['bench', 'console'],
    ['bench', 'gateway'],
    ['campaign'],
    ['keys'],
  ])('%j --help describes every flag it names, on a line of its own', (...command) => {
    const { stdout } = run([...command, '--help']);
    const flags = new Set([...stdout.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]));
    flags.delete('--help');
    const described = (flag: string) =>
      stdout.split('\n').some((line) => {
        const words = line.trim().split(/\s+/);
        return words[0]?.replace(/,$/, '') === flag && words.length >= 4;
      });
    expect([...flags].filter((flag) => !described(flag))).toEqual([]);
  });

  it('points only at documentation that exists', () => {
    for (const command of [['serve'], ['sim'], ['call'], ['doctor'], ['campaign'], ['keys']]) {
      const { stdout } = run([...command, '--help']);
      for (const [, path] of stdout.matchAll(/\b((?:docs\/)?[\w-]+\.md)\b/g))
        expect(existsSync(join(ROOT, path!)), `${command.join(' ')} --help names ${path}`).toBe(true);
      expect(stdout).not.toMatch(/README's \w+ section/);
    }
  });
});

// `callbridge call` finds the server where `campaign` and `doctor` do: on PORT.
describe('callbridge call and PORT', () => {
  it('calls http://127.0.0.1:$PORT when no --server is given', async () => {
    const port = await freePort();
    const result = spawnSync(process.execPath, ['dist/cli.js', 'call', '--no-analysis'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), PORT: String(port), DATA_DIR },
      encoding: 'utf8',
      timeout: 20_000,
    });
    const at = `http://127.0.0.1:${port}`;
    expect(result.stdout.startsWith('calling +')).toBe(true);
    expect(result.stdout).toContain(` at ${at} (`);
    expect(result.stderr).toContain(`${at}/carriers/twilio/voice unreachable: ECONNREFUSED`);
    expect(result.status).toBe(1);
  });
});
