// Logger options shared by the server and every child logger. Secrets never reach a log line:
// pino removes them by path before serialization. What callers say and the keys they press are
// logged only under dedicated keys, which are dropped unless the operator turns them on
// (LOG_TRANSCRIPTS=on): a default log holds no conversation.
import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-twilio-signature"]',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'apiKey',
  'authToken',
  'token',
  'streamToken',
  'secret',
  'secrets',
  '*.apiKey',
  '*.authToken',
  '*.token',
  '*.secret',
  '*.secrets',
  '*.streamTokenSecret',
  '*.adminToken',
  'customParameters.token',
  '*.customParameters.token',
  'req.url',
];

const CENSOR = '[redacted]';

/** Media URLs carry the stream token as their last path segment: the path is logged without it. */
export function redactStreamToken(url: string): string {
  return url.replace(/^(\/media\/[^/?#]+\/[^/?#]+\/)[^/?#]+/, `$1${CENSOR}`);
}

/**
 * A request URL as logged: its path without a stream token, and no query. Carrier webhook URLs carry
 * outbound contexts (contact variables) in their query (docs/security.md): none is logged, at any level.
 */
export function loggedUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = redactStreamToken(queryAt === -1 ? url : url.slice(0, queryAt));
  return queryAt === -1 ? path : `${path}?${CENSOR}`;
}

/** Request URLs keep their path but for a stream token; every other redacted path is censored whole. */
function censor(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] === 'url' && typeof value === 'string') return loggedUrl(value);
  return CENSOR;
}

/** Top-level keys of a log line that hold conversation: transcript text and keypad digits. */
export const TRANSCRIPT_KEYS: readonly string[] = Object.freeze(['transcript', 'dtmf']);

export interface LogOptions {
  /** Keep `TRANSCRIPT_KEYS` in log lines (LOG_TRANSCRIPTS=on). Default: dropped. */
  transcripts?: boolean;
}

function withoutTranscripts(object: Record<string, unknown>): Record<string, unknown> {
  if (!TRANSCRIPT_KEYS.some((key) => key in object)) return object;
  const kept = { ...object };
  for (const key of TRANSCRIPT_KEYS) delete kept[key];
  return kept;
}

export function loggerOptions(level: string, opts: LogOptions = {}): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor },
    ...(!opts.transcripts && { formatters: { log: withoutTranscripts } }),
  };
}

export function createLogger(level: string, destination?: DestinationStream, opts: LogOptions = {}): Logger {
  return pino(loggerOptions(level, opts), destination ?? outputStream(1));
}

/** Errors that mean nobody reads the output any more: a closed pipe, a closed or hung-up terminal. */
const GONE = new Set(['EPIPE', 'EBADF', 'EIO', 'ENXIO', 'ECONNRESET', 'EINVAL']);
/** How long one line may wait on a full pipe (EAGAIN) before it is dropped rather than stall calls. */
const FULL_PIPE_WAIT_MS = 1_000;
const FULL_PIPE_PAUSE_MS = 10;

/**
 * A synchronous writer for a file descriptor that goes quiet once its reader is gone. pino's
 * default writer retries a failing write forever (EBADF every 100 ms), which blocks the event loop
 * and with it SIGTERM: with its log pipe closed the server must still serve, drain and exit.
 */
export function outputStream(fd: number): DestinationStream & { readonly gone: boolean } {
  let gone = false;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    get gone() {
      return gone;
    },
    write(line: string) {
      if (gone) return;
      const bytes = Buffer.from(line);
      let offset = 0;
      let waitedMs = 0;
      while (offset < bytes.length) {
        try {
          offset += writeSync(fd, bytes, offset);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? '';
          if (code === 'EAGAIN' && waitedMs < FULL_PIPE_WAIT_MS) {
            Atomics.wait(pause, 0, 0, FULL_PIPE_PAUSE_MS);
            waitedMs += FULL_PIPE_PAUSE_MS;
            continue;
          }
          if (GONE.has(code)) gone = true;
          return;
        }
      }
    },
  };
}
