// An invalid setting stops the real process before it listens (README.md "Environment"): a non-zero
// exit, one line on stderr naming the variable (or file and field), and no secret in what it prints.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale, ROOT } from '../helpers/build.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SECRET = 'supersecretvalue';
const OTHER_SECRET = 'agent-key-0123456789-secret';
const LISTEN_MARK = 'probe: net.Server.listen called';
/** Preloaded into the server: says on stderr whenever anything in the process starts listening. */
const LISTEN_PROBE =
  'data:text/javascript,import net from "node:net"; const listen = net.Server.prototype.listen;' +
  `net.Server.prototype.listen = function (...args) { process.stderr.write("${LISTEN_MARK}\\n");` +
  ' return listen.apply(this, args); };';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `node dist/main.js` as `npm start` runs it, with the listen probe and only the given settings
 * (nothing from the shell). `stopWhenListening` ends a process that does start.
 */
async function startServer(env: Record<string, string>, stopWhenListening = false): Promise<Run> {
  const child = spawn(process.execPath, ['--import', LISTEN_PROBE, 'dist/main.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
    // Its own log line, once the shutdown handlers are in place.
    if (stopWhenListening && stdout.includes('Server listening')) child.kill('SIGTERM');
  });
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  // A process that does start would listen forever: the timeout turns that into a clear failure.
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  return { code, signal, stdout, stderr };
}

describe('the server refuses to start on an invalid setting', () => {
  let dir: string;
  let badProfileDir: string;
  let premiumTransferDir: string;

  beforeAll(() => {
    buildIfStale();
    dir = mkdtempSync(join(tmpdir(), 'callbridge-config-exit-'));
    // A copy of the shipped config whose default profile breaks the speak rule: v1 needs a lyric- model.
    badProfileDir = join(dir, 'config');
    cpSync(join(ROOT, 'config'), badProfileDir, { recursive: true });
    const profilePath = join(badProfileDir, 'agents', 'default.json');
    const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as Record<string, unknown>;
    profile.speak = { provider: { type: 'speech', version: 'v1', model: 'turn-kit-en' } };
    writeFileSync(profilePath, JSON.stringify(profile, null, 2));
    // A copy whose default profile may transfer callers to a premium-rate number.
    premiumTransferDir = join(dir, 'config-premium');
    cpSync(join(ROOT, 'config'), premiumTransferDir, { recursive: true });
    const premiumPath = join(premiumTransferDir, 'agents', 'default.json');
    const premium = JSON.parse(readFileSync(premiumPath, 'utf8')) as Record<string, unknown>;
    premium.transfer = { allow: ['+442071234567', '+19002345678'] };
    writeFileSync(premiumPath, JSON.stringify(premium, null, 2));
  }, 60_000);

  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const cases: Array<{ name: string; env: () => Record<string, string>; names: RegExp; secrets?: string[] }> =
    [
      { name: 'PORT=abc', env: () => ({ PORT: 'abc' }), names: /^PORT: .*"abc"$/ },
      { name: 'REGION=mars', env: () => ({ REGION: 'mars' }), names: /^REGION: .*"mars"$/ },
      // Once accepted, then a listen error with a stack trace.
      {
        name: 'HOST=999.1.1.1',
        env: () => ({ HOST: '999.1.1.1' }),
        names: /^HOST: must be an IP address or a host name, got "999\.1\.1\.1"$/,
      },
      {
        name: 'INSTANCE_ID with a slash',
        env: () => ({ INSTANCE_ID: 'eu/1' }),
        names: /^INSTANCE_ID: must be 1 to 128 .*"eu\/1"$/,
      },
      {
        name: 'AGENT_URL with the wrong scheme',
        env: () => ({ AGENT_URL: 'http://x', AGENT_API_KEY: OTHER_SECRET }),
        names: /^AGENT_URL: must be a ws or wss URL/,
        secrets: [OTHER_SECRET],
      },
      {
        name: 'AGENT_URL without AGENT_API_KEY',
        env: () => ({ AGENT_URL: 'wss://x' }),
        names: /^AGENT_API_KEY: required when AGENT_URL is set$/,
      },
      {
        name: 'NODE_ENV=production without Twilio credentials',
        env: () => ({ NODE_ENV: 'production' }),
        names: /^TWILIO_AUTH_TOKEN: required when NODE_ENV=production/,
      },
      {
        name: 'TWILIO_AUTH_TOKEN without TWILIO_ACCOUNT_SID',
        env: () => ({ TWILIO_AUTH_TOKEN: SECRET }),
        names: /^TWILIO_ACCOUNT_SID: required when TWILIO_AUTH_TOKEN is set$/,
        secrets: [SECRET],
      },
      {
        name: 'a malformed TWILIO_ACCOUNT_SID beside a token',
        env: () => ({ TWILIO_ACCOUNT_SID: 'AC123', TWILIO_AUTH_TOKEN: SECRET }),
        names: /^TWILIO_ACCOUNT_SID: must be AC followed by 32 hexadecimal digits/,
        secrets: [SECRET],
      },
      {
        name: 'an ADMIN_TOKEN too short',
        env: () => ({ ADMIN_TOKEN: 'short-secret' }),
        names: /^ADMIN_TOKEN: must be at least 16 characters$/,
        secrets: ['short-secret'],
      },
      {
        name: 'an unknown DIAL_BLOCKED_TYPES entry',
        env: () => ({ DIAL_BLOCKED_TYPES: 'PREMIUM_RATE,EXPENSIVE' }),
        names: /^DIAL_BLOCKED_TYPES: each entry must be one of PREMIUM_RATE, .*, got "EXPENSIVE"$/,
      },
      {
        name: 'a FETCH_ALLOWED_HOSTS entry that is loopback in disguise',
        env: () => ({ FETCH_ALLOWED_HOSTS: '0x7f000001' }),
        names:
          /^FETCH_ALLOWED_HOSTS: each entry must be a host name, an IP address or a CIDR, got "0x7f000001"$/,
      },
      {
        name: 'a profile that may transfer to a premium-rate number',
        env: () => ({ CONFIG_DIR: premiumTransferDir }),
        names:
          /^profile default: transfer\.allow\[1\]: \+19002345678 is a premium-rate number \(DIAL_BLOCKED_TYPES\), refused by the dial policy$/,
      },
      {
        name: 'a profile with speak version v1 and a turn- model',
        env: () => ({ CONFIG_DIR: badProfileDir }),
        names: /^\S*config\/agents\/default\.json: \/speak\/provider\/model: version v1 needs a lyric- model/,
      },
    ];

  it('a valid setting does listen (the probe sees it)', async () => {
    const run = await startServer({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: join(dir, 'data-valid') }, true);
    expect(run.stderr).toContain(LISTEN_MARK);
    expect(run).toMatchObject({ code: 0, signal: null });
  });

  it.each(cases)('$name', async ({ env, names, secrets = [] }) => {
    const dataDir = join(dir, `data-${Math.random().toString(16).slice(2)}`);
    const run = await startServer({ HOST: '127.0.0.1', PORT: '0', DATA_DIR: dataDir, ...env() });

    expect(run.signal).toBeNull();
    expect(run.code).not.toBe(0);
    // Exactly one line, and it names the variable (or file and field).
    expect(run.stderr.endsWith('\n')).toBe(true);
    const lines = run.stderr.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1);
    const prefix = 'callbridge: invalid configuration: ';
    expect(lines[0]!.startsWith(prefix)).toBe(true);
    expect(lines[0]!.slice(prefix.length)).toMatch(names);
    // It stopped before anything else: nothing listened, nothing logged, no database.
    expect(run.stderr).not.toContain(LISTEN_MARK);
    expect(run.stdout).toBe('');
    expect(existsSync(dataDir)).toBe(false);
    for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret);
  });
});
