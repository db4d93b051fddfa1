// `callbridge call`: places one simulated call against a running server and reports it (README.md,
// "Placing a simulated call"). Exit 0 when the caller heard the agent, 1 when the call failed, 2 on usage.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readWav, toMulaw8k } from '../../audio/wav.js';
import { writeStereoWav } from './call-tape.js';
import { packageRoot } from '../package-root.js';
import { cliAdminToken } from '../../campaign-cli/token.js';
import { analysisReport } from './call-analysis.js';
import { ADMIN_TOKEN_FILE } from '../../admin/token-file.js';
import { callSigning } from './call-signing.js';
import { dataDirOf } from './simulation-keys-file.js';
import { recordingReport } from './recording-report.js';
import type { SimDialect } from './dialect.js';
import { DEFAULT_DIALECT, dialectNames, findDialect } from './dialects/index.js';
import type { CallEvent } from './events.js';
import { formatEvent, SPEAK_REASONS, seconds } from './format.js';
import { DEFAULT_FROM, DEFAULT_HOLD_MS, DEFAULT_TO, placeCall, RECORDED_TO } from './place-call.js';

export interface CommandIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
}

const processIo: CommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

const E164 = /^\+[1-9]\d{1,14}$/;
const USAGE = `usage: callbridge call [--server URL] [--carrier ${dialectNames().join('|')}] [--wav FILE] [--out FILE]
                      [--from E164] [--to E164] [--hold-ms N] [--no-wait] [--no-analysis] [--record] [--verbose]

Places one simulated call against a running server as the carrier would (its voice webhook, then
the media stream), speaks the caller's audio in real time and prints the call's events.

  --server URL      the server (default http://127.0.0.1:$PORT, PORT 8080)
  --carrier NAME    the carrier played: ${dialectNames().join(', ')} (default ${DEFAULT_DIALECT.name})
  --wav FILE        what the caller says, a WAV file (default: a bundled phrase)
  --out FILE        write both sides of the call there, a stereo WAV (caller left, agent right)
  --from E164       the caller's number (default ${DEFAULT_FROM})
  --to E164         the number called (default ${DEFAULT_TO}; with --record ${RECORDED_TO})
  --hold-ms N       how long the caller stays on the line after speaking (default ${DEFAULT_HOLD_MS})
  --no-wait         speak at once instead of after the agent's greeting
  --no-analysis     do not wait for the server's analysis of the call
  --record          call the number routed to the recorded profile; print where the recording is
  --verbose, -v     print every mark echo too

Signs as the carrier with the keys the server checks (its simulated carrier's, from DATA_DIR), or
with the carrier's credentials in the environment; reads the admin token as campaign does.`;
/** How long to wait for the server to complete the call's recording. */
const RECORDING_WAIT_MS = 15_000;
/** How long to wait for the server's post-call analysis of the call. */
const ANALYSIS_WAIT_MS = 30_000;
/** The caller phrase sent without --wav: raw μ-law 8 kHz, shipped with the package. */
const BUNDLED_PHRASE = join('assets', 'phrases', 'caller-order.ulaw');

interface CallArgs {
  server: string;
  dialect: SimDialect;
  wav: string | undefined;
  out: string | undefined;
  from: string;
  to: string;
  holdMs: number;
  /** Listen to the agent's greeting before speaking; `--no-wait` speaks at once. */
  waitForGreeting: boolean;
  /** Also print every mark echo (`--verbose`); they come twice a second while the agent speaks. */
  verbose: boolean;
  /** Wait for and print the server's analysis of the call (`--no-analysis` skips it). */
  analysis: boolean;
  /** Print where the call's recording is once the server completed it (`--record`). */
  record: boolean;
  /** Whether `--to` was given; `--record` without it dials the recorded number. */
  toChosen: boolean;
}

class UsageError extends Error {}

export async function callCommand(args: string[], io: CommandIo = processIo): Promise<number> {
  let parsed: CallArgs | 'help';
  let audio: Buffer;
  try {
    parsed = await readArgs(args, io.env);
    if (parsed === 'help') {
      io.stdout(`${USAGE}\n`);
      return 0;
    }
    audio = parsed.wav === undefined ? await readBundledPhrase() : await readCallerWav(parsed.wav);
  } catch (err) {
    io.stderr(`callbridge call: ${(err as Error).message}\n`);
    // A missing bundled phrase is a broken install, not a usage error: it fails like a call (exit 1).
    return err instanceof UsageError ? 2 : 1;
  }
  const { dialect } = parsed;
  if (parsed.record && parsed.toChosen === false) {
    io.stdout(
      `--record without --to: calling ${RECORDED_TO}, which the shipped config/numbers.json routes to ` +
        'the "recorded" profile (recording on, with a consent prompt)\n',
    );
  }
  // Signed as the carrier would sign: with the keys the server checks for it (call-signing.ts).
  const signing = await callSigning({
    server: parsed.server,
    dialect,
    env: definedOnly(io.env),
    cwd: process.cwd(),
  });
  io.stdout(
    `calling ${parsed.to} from ${parsed.from} at ${parsed.server} (${dialect.name}, ` +
      `${signing.note}), ${seconds(audio.length / 8)} of caller audio\n`,
  );

  // Ctrl-C hangs up like a caller putting the phone down, so the recording is still written.
  const hangUp = new AbortController();
  const onInterrupt = (): void => hangUp.abort();
  process.once('SIGINT', onInterrupt);
  let result: Awaited<ReturnType<typeof placeCall>>;
  try {
    result = await placeCall({
      server: parsed.server,
      from: parsed.from,
      to: parsed.to,
      audio,
      dialect,
      env: signing.env,
      adminToken: adminToken(io.env).value,
      holdMs: parsed.holdMs,
      waitForGreeting: parsed.waitForGreeting,
      onEvent: (event) => {
        if (event.type !== 'mark-echoed' || parsed.verbose) io.stdout(`${formatEvent(event)}\n`);
      },
      signal: hangUp.signal,
    });
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }

  const streamOpened = result.events.some((event) => event.type === 'stream-started');
  if (!streamOpened) {
    // Nothing was played, so there is no recording to write: the one line says why.
    io.stderr(`callbridge call: call failed: ${result.endReason}\n`);
    return 1;
  }
  let wrote = '';
  if (parsed.out !== undefined) {
    try {
      // Both sides on the call's clock: the caller left, the agent right (call-tape.ts).
      await writeFile(parsed.out, writeStereoWav(result.sides.caller, result.sides.agent));
      wrote = `, wrote ${parsed.out} (caller left, agent right)`;
    } catch (err) {
      io.stderr(`callbridge call: cannot write --out ${parsed.out}: ${(err as Error).message}\n`);
      return 1;
    }
  }
  io.stdout(
    `call ${result.callSid} ended: ${result.endReason}\n` +
      `  duration ${seconds(result.durationMs)}, heard ${seconds(result.heard.length / 8)} of agent audio ` +
      `(${result.heard.length} bytes)${wrote}\n` +
      `  ${describeCallerTurn(result.events)}\n`,
  );
  if (parsed.analysis && !hangUp.signal.aborted) {
    const lines = await analysisReport({
      server: parsed.server,
      callSid: result.callSid,
      token: adminToken(io.env),
      timeoutMs: ANALYSIS_WAIT_MS,
      intervalMs: 250,
    });
    for (const line of lines) io.stdout(`${line}\n`);
  }
  if (parsed.record) {
    const lines = await recordingReport({
      server: parsed.server,
      callSid: result.callSid,
      token: adminToken(io.env),
      tokenInShell: tokenInShell(io.env),
      dataDir: io.env.DATA_DIR?.trim() || './data',
      timeoutMs: RECORDING_WAIT_MS,
      intervalMs: 250,
    });
    for (const line of lines) io.stdout(`${line}\n`);
  }
  if (result.ok) return 0;
  const nothingHeard = result.heard.length === 0 ? ', and the caller heard nothing' : '';
  io.stderr(`callbridge call: call failed: ${result.endReason}${nothingHeard}\n`);
  return 1;
}

async function readArgs(args: string[], env: Record<string, string | undefined>): Promise<CallArgs | 'help'> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: {
        server: { type: 'string' },
        carrier: { type: 'string' },
        wav: { type: 'string' },
        out: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        'hold-ms': { type: 'string' },
        'no-wait': { type: 'boolean' },
        'no-analysis': { type: 'boolean' },
        record: { type: 'boolean' },
        verbose: { type: 'boolean', short: 'v' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
      strict: true,
    }).values;
  } catch (err) {
    // Node's messages run on with advice about `--`; the first sentence is the one that matters.
    throw new UsageError(`${(err as Error).message.split('. ')[0]}\n${USAGE}`);
  }
  if (values.help === true) return 'help';
  const text = (key: string): string | undefined => values[key] as string | undefined;

  const carrier = text('carrier') ?? DEFAULT_DIALECT.name;
  const dialect = findDialect(carrier);
  if (dialect === undefined) {
    throw new UsageError(`unsupported --carrier "${carrier}" (supported: ${dialectNames().join(', ')})`);
  }
  // The server this machine runs by default: PORT, as `campaign` and `doctor` read it.
  const server = text('server') ?? `http://127.0.0.1:${env.PORT?.trim() || '8080'}`;
  if (!/^https?:\/\/[^/]/.test(server) || !URL.canParse(server)) {
    throw new UsageError(`--server must be an http:// or https:// URL, got "${server}"`);
  }
  const from = text('from') ?? DEFAULT_FROM;
  const record = values.record === true;
  const to = text('to') ?? (record ? RECORDED_TO : DEFAULT_TO);
  checkE164('--from', from);
  checkE164('--to', to);
  const holdText = text('hold-ms');
  if (holdText !== undefined && !/^\d{1,7}$/.test(holdText)) {
    throw new UsageError(`--hold-ms must be a whole number of milliseconds, got "${holdText}"`);
  }
  const out = text('out');
  if (out !== undefined) {
    const folder = await stat(dirname(resolve(out))).catch(() => undefined);
    if (!folder?.isDirectory())
      throw new UsageError(`--out ${out}: folder ${dirname(resolve(out))} does not exist`);
  }
  return {
    server,
    dialect,
    wav: text('wav'),
    out,
    from,
    to,
    holdMs: holdText === undefined ? DEFAULT_HOLD_MS : Number(holdText),
    waitForGreeting: values['no-wait'] !== true,
    verbose: values.verbose === true,
    analysis: values['no-analysis'] !== true,
    record,
    toChosen: text('to') !== undefined,
  };
}

/** ADMIN_TOKEN, else the server's token file under DATA_DIR, as the campaign commands find it. */
function adminToken(
  env: Record<string, string | undefined>,
): { value: string } | { value: null; why: string } {
  try {
    return { value: cliAdminToken(env, process.cwd()) };
  } catch (err) {
    return { value: null, why: (err as Error).message };
  }
}

/**
 * The admin token as a shell reads it where the command ran: `$ADMIN_TOKEN` when it is set, else
 * the server's token file read by `cat` (ADMIN_TOKEN is unset by default: the file is what the CLI used).
 */
function tokenInShell(env: Record<string, string | undefined>): string {
  if (env.ADMIN_TOKEN?.trim()) return '$ADMIN_TOKEN';
  const file = join(dataDirOf(env, process.cwd()), ADMIN_TOKEN_FILE);
  return `$(cat '${file.replace(/'/g, `'\\''`)}')`;
}

/** When the caller spoke, for the summary: the greeting wait is what most often explains a call. */
function describeCallerTurn(events: CallEvent[]): string {
  const started = events.find((event) => event.type === 'caller-started-speaking');
  if (started === undefined) return 'the caller never spoke: the call ended before their turn';
  return `the caller started speaking at ${seconds(started.atMs)}, ${SPEAK_REASONS[started.reason]}`;
}

function checkE164(flag: string, value: string): void {
  if (!E164.test(value))
    throw new UsageError(`${flag} must be an E.164 number like +15005550006, got "${value}"`);
}

async function readCallerWav(path: string): Promise<Buffer> {
  try {
    return toMulaw8k(readWav(await readFile(path)));
  } catch (err) {
    throw new UsageError(`cannot use --wav ${path}: ${(err as Error).message}`);
  }
}

async function readBundledPhrase(): Promise<Buffer> {
  const path = join(packageRoot(), BUNDLED_PHRASE);
  try {
    return await readFile(path);
  } catch (err) {
    throw new Error(`cannot read the bundled caller phrase ${path}: ${(err as Error).message}`);
  }
}

/** The variables that hold a value: an empty one must not hide the simulation's key. */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '',
    ),
  );
}
