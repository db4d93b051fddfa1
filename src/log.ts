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
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}
