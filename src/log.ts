// Logger options shared by the server and every child logger. Secrets never reach a log line:
// pino removes them by path before serialization.
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

/** Request URLs keep all but a stream token; every other redacted path is censored whole. */
function censor(value: unknown, path: string[]): unknown {
  if (path[path.length - 1] === 'url' && typeof value === 'string') return redactStreamToken(value);
  return CENSOR;
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor },
  };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
