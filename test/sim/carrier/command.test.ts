import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { writeWavPcm16 } from '../../../src/audio/wav-writer.js';
import { type CommandIo, callCommand } from '../../../src/sim/carrier/command.js';
import { dialectNames } from '../../../src/sim/carrier/dialects/index.js';
import { readStereoWav } from '../../helpers/wav-stereo.js';

const AUTH_TOKEN = 'command-test-token';

function captureIo(env: Record<string, string | undefined> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIo = { stdout: (t) => out.push(t), stderr: (t) => err.push(t), env };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

let dir: string;
let http: Server | undefined;
/** Caller audio the server received, in order. */
let callerAudio: Buffer[] = [];
/** Reads of a call record through the admin API. */
let recordAsks = 0;

beforeEach(async () => {
  callerAudio = [];
  recordAsks = 0;
  dir = await mkdtemp(join(tmpdir(), 'callbridge-call-'));
});

afterEach(async () => {
  if (http !== undefined) {
    http.closeAllConnections();
    await new Promise((resolve) => http!.close(resolve));
    http = undefined;
  }
  await rm(dir, { recursive: true, force: true });
});

/** Caller frames the `answer` server hears before it hangs up: the caller's first words. */
const WORDS_BEFORE_HANGUP = 5;

/** A 20 ms frame that is all μ-law silence. */
const isSilence = (frame: Buffer) => frame.every((b) => b === 0xff);

/**
 * A server whose agent greets with 0.1 s of audio and hangs up once it has heard the caller's
 * first words; `silent` hangs up without a word; `decline` turns calls away.
 */
async function startServer(
  mode: 'answer' | 'silent' | 'decline',
  wordsBeforeHangup = WORDS_BEFORE_HANGUP,
): Promise<string> {
  http = createServer();
  const wss = new WebSocketServer({ server: http, path: '/media/twilio' });
  let base = '';
  http.on('request', async (req, res) => {
    // The admin API's record of a call, as `--record` reads it: recorded once asked twice.
    if (req.method === 'GET' && req.url?.startsWith('/v1/calls/')) {
      const asked = ++recordAsks;
      const recorded =
        asked >= 2 ? { recording: { state: 'ready', durationMs: 1500, bytes: 48_044, pauses: [] } } : {};
      const authorized = req.headers.authorization === 'Bearer admin-token-for-command-tests';
      res.writeHead(authorized ? 200 : 401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(authorized ? { callSid: req.url.split('/')[3], profile: 'support', ...recorded } : {}),
      );
      return;
    }
    let body = '';
    for await (const chunk of req) body += chunk;
    const params = Object.fromEntries(new URLSearchParams(body));
    const signature = String(req.headers['x-twilio-signature'] ?? '');
    if (!twilio.validateRequest(AUTH_TOKEN, signature, `${base}${req.url}`, params)) {
      res.writeHead(403).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      mode === 'decline'
        ? '<Response><Say>We are closed.</Say><Hangup/></Response>'
        : `<Response><Connect><Stream url="${base.replace('http', 'ws')}/media/twilio"/></Connect></Response>`,
    );
  });
  wss.on('connection', (ws) => {
    let words = 0;
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString());
      const streamSid = message.streamSid;
      if (message.event === 'media') {
        const frame = Buffer.from(message.media.payload, 'base64');
        callerAudio.push(frame);
        if (mode === 'answer' && !isSilence(frame) && ++words === wordsBeforeHangup) ws.close(1000, 'done');
      }
      if (message.event === 'start' && mode === 'silent') ws.close(1000);
      if (message.event === 'start' && mode === 'answer') {
        ws.send(
          JSON.stringify({
            event: 'media',
            streamSid,
            media: { payload: Buffer.alloc(800, 0x2a).toString('base64') },
          }),
        );
        ws.send(JSON.stringify({ event: 'mark', streamSid, mark: { name: 'said' } }));
      }
    });
  });
  http.on('close', () => wss.close());
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return base;
}

async function tinyWav(): Promise<string> {
  const path = join(dir, 'caller.wav');
  await writeFile(path, writeWavPcm16(new Int16Array(1600).fill(500), 16000));
  return path;
}

describe('callbridge call: usage errors exit 2 with one clear line', () => {
  it.each([
    [['--bogus'], /Unknown option '--bogus'/],
    [['extra'], /Unexpected argument 'extra'/],
    [['--server'], /argument missing/],
    [['--carrier', 'pigeon'], /unsupported --carrier "pigeon" \(supported: twilio(, \w+)*\)/],
    [['--from', '5551234'], /--from must be an E\.164 number/],
    [['--to', '+0123'], /--to must be an E\.164 number/],
    [['--hold-ms', 'soon'], /--hold-ms must be a whole number/],
    [['--no-wait=yes'], /Option '--no-wait' does not take an argument/],
    [['--server', 'ftp://example.com'], /--server must be an http/],
    [['--wav', '/nonexistent/caller.wav'], /cannot use --wav \/nonexistent\/caller\.wav: ENOENT/],
    [['--out', '/nonexistent/dir/heard.wav'], /--out .* does not exist/],
  ])('%j', async (args, message) => {
    const { io, err } = captureIo();
    expect(await callCommand(args, io)).toBe(2);
    expect(err()).toMatch(message);
    expect(err().startsWith('callbridge call: ')).toBe(true);
  });

  it('lists every registered carrier in its usage', async () => {
    const { io, out } = captureIo();
    expect(await callCommand(['--help'], io)).toBe(0);
    expect(out()).toContain(`[--carrier ${dialectNames().join('|')}]`);
  });

  it('rejects a file that is not a WAV', async () => {
    const path = join(dir, 'notes.wav');
    await writeFile(path, 'just text');
    const { io, err } = captureIo();
    expect(await callCommand(['--wav', path], io)).toBe(2);
    expect(err()).toBe(`callbridge call: cannot use --wav ${path}: not a WAV file (no RIFF/WAVE header)\n`);
  });

  it('prints usage on --help and exits 0', async () => {
    const { io, out } = captureIo();
    expect(await callCommand(['--help'], io)).toBe(0);
    expect(out()).toMatch(/^usage: callbridge call/);
  });
});

describe('callbridge call against a server', () => {
  it('places a signed call, prints its events and writes what was heard as a μ-law WAV', async () => {
    const server = await startServer('answer');
    const outPath = join(dir, 'heard.wav');
    const { io, out, err } = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    const code = await callCommand(
      ['--server', server, '--wav', await tinyWav(), '--out', outPath, '--hold-ms', '5000'],
      io,
    );
    expect(err()).toBe('');
    expect(code).toBe(0);
    expect(out()).toMatch(
      /calling \+15005550001 from \+15005550006 at http:\/\/127\.0\.0\.1:\d+ \(twilio, signed\)/,
    );
    expect(out()).toMatch(/^ +0\.0\ds {2}stream {4}MZ[0-9a-f]{32} started$/m);
    expect(out()).toMatch(/s {2}hangup {4}server closed the stream: 1000 done$/m);
    expect(out()).toMatch(/s {2}caller {4}started speaking after the greeting$/m);
    expect(out()).toMatch(
      /ended: server-hangup\n {2}duration \d+\.\d\ds, heard 0\.10s of agent audio \(800 bytes\)/,
    );
    expect(out()).toMatch(/\n {2}the caller started speaking at \d+\.\d\ds, after the greeting\n$/);
    // The greeting and the quiet after it went by before the caller's first words.
    const firstWords = callerAudio.findIndex((frame) => !isSilence(frame));
    expect(firstWords).toBeGreaterThanOrEqual(5 + 15);
    // Both sides on the call's clock: the caller left, the agent right, silences kept.
    const tape = readStereoWav(await readFile(outPath));
    expect(tape).toMatchObject({ sampleRate: 8000, channels: 2 });
    const spoke = (samples: Int16Array) => samples.findIndex((sample) => Math.abs(sample) > 64);
    const agentFirst = spoke(tape.right);
    const callerFirst = spoke(tape.left);
    expect(agentFirst).toBeGreaterThanOrEqual(0);
    // The caller waited for the greeting: their first sound comes after the agent's, on the left.
    expect(callerFirst).toBeGreaterThan(agentFirst + 800);
    expect(tape.right.filter((sample) => Math.abs(sample) > 64).length).toBeLessThanOrEqual(800);
    expect(tape.left.length / 8000).toBeGreaterThan(firstWords * 0.02);
  });

  it('sends the bundled caller phrase when no --wav is given, after silence while the greeting plays', async () => {
    const server = await startServer('answer');
    const { io, out } = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server], io)).toBe(0);
    const phrase = await readFile(new URL('../../../assets/phrases/caller-order.ulaw', import.meta.url));
    expect(out()).toContain(`${(phrase.length / 8000).toFixed(2)}s of caller audio`);
    const firstWords = callerAudio.findIndex((frame) => !isSilence(frame));
    expect(firstWords).toBeGreaterThan(0);
    const spoken = Buffer.concat(callerAudio.slice(firstWords));
    expect(spoken.length).toBeGreaterThanOrEqual(WORDS_BEFORE_HANGUP * 160);
    expect(spoken).toEqual(phrase.subarray(0, spoken.length));
  });

  it('prints where the recording is with --record, once the server completed it', async () => {
    const server = await startServer('answer');
    const { io, out, err } = captureIo({
      TWILIO_AUTH_TOKEN: AUTH_TOKEN,
      ADMIN_TOKEN: 'admin-token-for-command-tests',
      DATA_DIR: '/srv/callbridge',
    });
    const code = await callCommand(
      ['--server', server, '--wav', await tinyWav(), '--no-analysis', '--record'],
      io,
    );
    expect(err()).toBe('');
    expect(code).toBe(0);
    const sid = /call (\S+) ended/.exec(out())![1]!;
    expect(out()).toContain(
      [
        'recording: ready, 1.5 s, 48044 bytes',
        `  url:  ${server}/v1/calls/${sid}/recording`,
        `  file: /srv/callbridge/recordings/${sid}.wav (with RECORDING_STORE=file)`,
        `  listen: curl -H "Authorization: Bearer $ADMIN_TOKEN" ${server}/v1/calls/${sid}/recording -o ${sid}.wav`,
      ].join('\n'),
    );
    expect(recordAsks).toBe(2);
  });

  it('speaks at once with --no-wait', async () => {
    const server = await startServer('answer');
    const { io, out } = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server, '--wav', await tinyWav(), '--no-wait'], io)).toBe(0);
    expect(out()).toMatch(
      /^ +0\.0\ds {2}caller {4}started speaking at once \(not waiting for a greeting\)$/m,
    );
    expect(out()).toMatch(/the caller started speaking at 0\.0\ds, at once/);
    expect(isSilence(callerAudio[0]!)).toBe(false);
  });

  it('prints mark echoes only with --verbose', async () => {
    const server = await startServer('answer', 50);
    // The bundled phrase keeps the caller talking until the agent's short reply and its mark have played.
    const quiet = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server, '--no-wait'], quiet.io)).toBe(0);
    expect(quiet.out()).toMatch(/agent audio stopped/);
    expect(quiet.out()).not.toMatch(/ mark +said/);
    callerAudio.length = 0;
    const verbose = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server, '--no-wait', '--verbose'], verbose.io)).toBe(0);
    expect(verbose.out()).toMatch(/ mark +said/);
  });

  it('exits 1 when the caller heard nothing', async () => {
    const server = await startServer('silent');
    const outPath = join(dir, 'heard.wav');
    const { io, err } = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server, '--wav', await tinyWav(), '--out', outPath], io)).toBe(1);
    expect(err()).toBe('callbridge call: call failed: server-hangup, and the caller heard nothing\n');
    // The file still holds the call: the caller's side, and silence where the agent said nothing.
    const tape = readStereoWav(await readFile(outPath));
    expect(tape.right.every((sample) => Math.abs(sample) <= 64)).toBe(true);
    expect(tape.left.length).toBeGreaterThan(0);
  });

  it('exits 1 when the call is declined', async () => {
    const server = await startServer('decline');
    const { io, out, err } = captureIo({ TWILIO_AUTH_TOKEN: AUTH_TOKEN });
    expect(await callCommand(['--server', server, '--wav', await tinyWav()], io)).toBe(1);
    expect(out()).toMatch(/declined {2}"We are closed\."/);
    expect(err()).toBe(
      'callbridge call: call failed: declined: the answer has no <Connect><Stream> (said "We are closed.")\n',
    );
  });
});
