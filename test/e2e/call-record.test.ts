// `callbridge call --record` against the server as `npm start` runs it (built-in local agent, the
// shipped config, nothing changed) yields a recording: the CLI dials the number the shipped routes
// give to the recorded profile, the consent prompt is rendered by the local agent's voice and heard
// first on the right channel, the caller is on the left, and the printed file exists.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdminTokenFile } from '../../src/admin/token-file.js';
import { buildIfStale, ROOT } from '../helpers/build.js';
import { freePort } from '../helpers/free-port.js';
import { frameEnergies, readStereoWav } from '../helpers/wav-stereo.js';

/** RMS of a voiced 20 ms frame (src/audio/energy.ts, SpeechDetector's default). */
const SPEECH_RMS = 500;

function processEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

function collect(child: ChildProcess): () => string {
  let text = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  return () => text;
}

async function waitForHealth(base: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the server exited with code ${server.exitCode}`);
    const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not answer /healthz');
}

describe('call --record against npm start with the shipped config', () => {
  let dir: string;
  let base: string;
  let server: ChildProcess;

  beforeAll(async () => {
    buildIfStale();
    dir = mkdtempSync(join(tmpdir(), 'callbridge-call-record-'));
    base = `http://127.0.0.1:${await freePort()}`;
    server = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: processEnv({ PORT: new URL(base).port, HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    collect(server);
    await waitForHealth(base, server);
  }, 60_000);

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      await exited;
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('records the call, prints where, and the file holds the caller left and the consent right', async () => {
    const call = spawn(
      process.execPath,
      ['bin/callbridge.js', 'call', '--server', base, '--record', '--no-analysis'],
      { cwd: ROOT, env: processEnv({ DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = collect(call);
    const [code] = await once(call, 'exit');
    const text = output();
    expect(code, text).toBe(0);
    expect(text).toMatch(/calling \+15550188, which the shipped config\/numbers\.json routes to/);

    const callSid = /^call (\S+) ended/m.exec(text)?.[1];
    expect(callSid, text).toBeDefined();
    expect(text).toMatch(/^recording: ready, \d+\.\d s, \d+ bytes$/m);
    const url = /^ {2}url: {2}(\S+)$/m.exec(text)?.[1];
    const file = /^ {2}file: (\S+) \(with RECORDING_STORE=file\)$/m.exec(text)?.[1];
    expect(url).toBe(`${base}/v1/calls/${callSid}/recording`);
    expect(file).toBe(join(dir, 'recordings', `${callSid}.wav`));
    expect(existsSync(file!)).toBe(true);

    // The listen line works as printed, in a shell with no ADMIN_TOKEN (the default): it reads the
    // server's token file.
    const listen = /^ {2}listen: (curl .+)$/m.exec(text)?.[1];
    expect(listen, text).toContain(`$(cat '${join(dir, 'admin-token')}')`);
    const fetched = spawnSync('/bin/sh', ['-c', listen!], {
      cwd: dir,
      env: processEnv({}),
      encoding: 'utf8',
    });
    expect(fetched.status, fetched.stderr).toBe(0);
    expect(
      readFileSync(join(dir, `${callSid}.wav`))
        .subarray(0, 4)
        .toString('latin1'),
    ).toBe('RIFF');

    const token = readAdminTokenFile(join(dir, 'admin-token')).token;
    const response = await fetch(url!, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^audio\/wav/);
    const tape = readStereoWav(Buffer.from(await response.arrayBuffer()));
    expect(tape).toMatchObject({ sampleRate: 8000, channels: 2 });

    // The first sound of the call is the consent, on the right channel, while the caller is silent;
    // then the caller speaks on the left (the bundled phrase, about 2 s of voiced frames).
    const right = frameEnergies(tape.right);
    const left = frameEnergies(tape.left);
    const firstRight = right.findIndex((energy) => energy >= SPEECH_RMS);
    const firstLeft = left.findIndex((energy) => energy >= SPEECH_RMS);
    expect(firstRight).toBeGreaterThanOrEqual(0);
    expect(firstLeft).toBeGreaterThan(firstRight);
    expect(left.filter((energy) => energy >= SPEECH_RMS).length).toBeGreaterThanOrEqual(50);
    // The consent ("This call is recorded.", about 1.3 s) is heard alone before the agent is dialed:
    // its first pause of 300 ms or more on the right channel ends it.
    const consentEnd = right.findIndex(
      (_, i) => i > firstRight && right.slice(i, i + 15).every((energy) => energy < SPEECH_RMS / 10),
    );
    expect(consentEnd - firstRight).toBeGreaterThan(40);
    expect(consentEnd - firstRight).toBeLessThan(120);
  }, 90_000);
});
