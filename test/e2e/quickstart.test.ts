// The newcomer's path, end to end over real processes (README.md "Quick start"): the server
// as `npm start` runs it, with no AGENT_URL, runs the built-in local agent and says so once; a
// simulated call against it hears the greeting, speaks, and hears the agent's reply; and so does a
// call from each of the other carriers, placed exactly as that carrier places it.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildIfStale, ROOT } from '../helpers/build.js';
import { freePort } from '../helpers/free-port.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmsEnergy, samplesPerFrame } from '../../src/audio/energy.js';
import { frameEnergies, readStereoWav } from '../helpers/wav-stereo.js';

/** RMS of a voiced 20 ms frame (src/audio/energy.ts, SpeechDetector's default). */
const SPEECH_RMS = 500;
const READY_TIMEOUT_MS = 15_000;

/** A clean environment: nothing from the developer's shell (AGENT_URL, NODE_ENV=test…) leaks in. */
function processEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

async function waitForHealth(base: string, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the server exited with code ${server.exitCode}`);
    const ok = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not answer /healthz within ${READY_TIMEOUT_MS} ms`);
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    stdout += text;
  });
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  return { stdout: () => stdout, stderr: () => stderr };
}

/** 20 ms frames of the samples whose RMS reaches the speech threshold. */
function voicedFrames(samples: Int16Array, sampleRate = 8000): number {
  const size = samplesPerFrame(sampleRate);
  let voiced = 0;
  for (let at = 0; at + size <= samples.length; at += size) {
    if (rmsEnergy(samples.subarray(at, at + size)) >= SPEECH_RMS) voiced += 1;
  }
  return voiced;
}

describe('quickstart: npm start with no AGENT_URL, then callbridge call', () => {
  let dir: string;
  let base: string;
  let server: ChildProcess;
  let serverOutput: ReturnType<typeof collect>;

  beforeAll(async () => {
    buildIfStale();
    dir = mkdtempSync(join(tmpdir(), 'callbridge-quickstart-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: processEnv({ PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'info' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serverOutput = collect(server);
    await waitForHealth(base, server);
  }, 60_000);

  afterAll(async () => {
    if (server !== undefined && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.kill('SIGTERM');
      const [code, signal] = await exited;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('says once, in its log, that the built-in local voice agent is used', () => {
    const lines = serverOutput.stdout().split('\n');
    const saying = lines.filter((line) => /built-in local voice agent/.test(line));
    expect(saying).toHaveLength(1);
    expect(JSON.parse(saying[0]!)).toMatchObject({ level: 30 });
  });

  it('places a call that hears the greeting, speaks after it, and hears the reply', async () => {
    const out = join(dir, 'reply.wav');
    // Run beside the server's data, as `npx callbridge call` next to `npm start`: it finds the admin
    // token and the simulated carrier's keys there (docs/security.md).
    const call = spawn(process.execPath, ['bin/callbridge.js', 'call', '--server', base, '--out', out], {
      cwd: ROOT,
      env: processEnv({ DATA_DIR: dir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = collect(call);
    const [code] = await once(call, 'exit');
    expect(output.stderr()).toBe('');
    expect(code).toBe(0);

    // The events, in the order a caller lives them.
    const lines = output.stdout().split('\n');
    const greeting = (
      JSON.parse(readFileSync(join(ROOT, 'config/agents/default.json'), 'utf8')) as { greeting: string }
    ).greeting;
    const at = (pattern: RegExp, after = -1): number => {
      const index = lines.findIndex((line, i) => i > after && pattern.test(line));
      expect(index, `no line matching ${pattern} after line ${after}:\n${output.stdout()}`).toBeGreaterThan(
        after,
      );
      return index;
    };
    const event = (kind: string, text: string) => new RegExp(`^ +\\d+\\.\\d\\ds {2}${kind} +${text}`);
    const started = at(event('stream', 'MZ[0-9a-f]{32} started'));
    const greeted = at(event('agent', escapeRegExp(JSON.stringify(greeting))), started);
    const speaking = at(event('caller', 'started speaking after the greeting'), greeted);
    const heardCaller = at(event('caller', '"'), speaking);
    const replied = at(event('agent', '"'), heardCaller);
    at(event('end', '\\S'), replied);
    // Nobody talked over the greeting.
    expect(lines.slice(0, speaking).filter((line) => /^ +\S+ {2}barge-in$/.test(line))).toEqual([]);

    // What the caller heard is speech: the greeting (about 3.8 s) and the reply (about 1.9 s), not
    // silence of the right length. Counted over the whole recording: a busy machine may pause the
    // playback, so its first pause is not where the greeting ends.
    // Both sides on the call's clock: the agent on the right, the caller on the left, after the greeting.
    const tape = readStereoWav(readFileSync(out));
    expect(tape).toMatchObject({ sampleRate: 8000, channels: 2 });
    expect(voicedFrames(tape.right)).toBeGreaterThanOrEqual(90);
    const firstVoiced = (samples: Int16Array) =>
      frameEnergies(samples).findIndex((energy) => energy >= SPEECH_RMS);
    expect(voicedFrames(tape.left)).toBeGreaterThanOrEqual(50);
    expect(firstVoiced(tape.left)).toBeGreaterThan(firstVoiced(tape.right) + 50);
  }, 45_000);

  it('names the built-in simulated carrier API that answers for carriers without credentials', async () => {
    const info = (await (await fetch(`${base}/`)).json()) as {
      carriers: string[];
      simulatedCarrierApi?: string;
    };
    expect(info.carriers).toEqual(['twilio', 'telnyx', 'plivo', 'vonage', 'exotel']);
    expect(info.simulatedCarrierApi).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  // Telnyx answers through its API (the simulated one here), Plivo with XML, Vonage with an NCCO and
  // L16 16 kHz binary frames, Exotel with a JSON URL and linear PCM chunks of at least 3,200 bytes.
  it.concurrent.each(['telnyx', 'plivo', 'vonage', 'exotel'])(
    'a %s call holds a conversation with the agent',
    async (carrier) => {
      const out = join(dir, `reply-${carrier}.wav`);
      const call = spawn(
        process.execPath,
        ['bin/callbridge.js', 'call', '--server', base, '--carrier', carrier, '--out', out],
        { cwd: ROOT, env: processEnv({ DATA_DIR: dir }), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const output = collect(call);
      const [code] = await once(call, 'exit');
      expect(output.stderr()).toBe('');
      expect(code).toBe(0);
      const text = output.stdout();
      expect(text).toMatch(new RegExp(`^calling \\S+ from \\S+ at \\S+ \\(${carrier}, `));
      // The greeting, the caller's turn after it, the agent's reply, and no carrier rule broken.
      expect(text).toMatch(/agent +"Thank you for calling/);
      expect(text).toMatch(/caller +started speaking after the greeting/);
      expect(text).toMatch(/agent +"Sure, I can help with that\."/);
      expect(text).not.toMatch(/warning/);
      expect(text).toMatch(/ended: caller-hangup/);
      // What the caller heard is speech, in the carrier's own rate: the greeting (about 3.8 s) and
      // the reply (about 1.9 s), not silence of the right length.
      const tape = readStereoWav(readFileSync(out));
      expect(voicedFrames(tape.right, tape.sampleRate)).toBeGreaterThanOrEqual(90);
      expect(voicedFrames(tape.left, tape.sampleRate)).toBeGreaterThanOrEqual(50);
    },
    60_000,
  );
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
