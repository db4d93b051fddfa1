// Readers for single environment variables. Each returns a typed value or throws a ConfigError
// whose one-line message names the variable, says what is wrong and, unless the variable holds a
// secret, quotes the offending value.
import { ConfigError } from '../errors.js';
import { checkUrl, maskUrlCredentials, type UrlRule } from './urls.js';

export type Env = Record<string, string | undefined>;

/**
 * Variables whose values never appear in an error message, known by their names' endings, so a new
 * carrier's secrets are covered by naming them so (docs/carriers.md): `…_TOKEN`, `…_SECRET`,
 * `…_PASSWORD`, `…_PRIVATE_KEY`, `…_API_KEY`, `…_SECRET_ACCESS_KEY`, and every `WEBHOOK_SECRET_…`.
 */
const SECRET_NAME =
  /(_TOKEN|_SECRET|_PASSWORD|_PRIVATE_KEY|_API_KEY|_SECRET_ACCESS_KEY)$|^WEBHOOK_SECRET_.+$/;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** Quotes a value for an error message: credentials masked, long values cut short. */
export function quoteValue(value: string): string {
  const masked = maskUrlCredentials(value);
  const short = masked.length > 80 ? `${masked.slice(0, 77)}...` : masked;
  return JSON.stringify(short);
}

/** `NAME: problem, got "value"`; the value is left out for secrets. */
export function envError(name: string, problem: string, value?: string): Error {
  const got = value === undefined || isSecretName(name) ? '' : `, got ${quoteValue(value)}`;
  return new ConfigError(`${name}: ${problem}${got}`);
}

/** The trimmed value, or undefined when unset or blank (an empty `PORT=` line means "not set"). */
export function envString(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export interface IntRange {
  fallback: number;
  min: number;
  max?: number;
}

export function envInt(env: Env, name: string, range: IntRange): number {
  const raw = envString(env, name);
  if (raw === undefined) return range.fallback;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const expected =
    range.max === undefined
      ? `must be an integer >= ${range.min}`
      : `must be an integer from ${range.min} to ${range.max}`;
  if (!/^[+-]?\d+$/.test(raw)) throw envError(name, expected, raw);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < range.min || value > max) throw envError(name, expected, raw);
  return value;
}

export function envOneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = envString(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw envError(name, `must be one of ${allowed.join(', ')}`, raw);
  }
  return raw as T;
}

/** The URL checked against `rule`, without a trailing slash; undefined when unset. */
export function envUrl(env: Env, name: string, rule: UrlRule): string | undefined {
  const raw = envString(env, name);
  if (raw === undefined) return undefined;
  const checked = checkUrl(raw, rule);
  if (!checked.ok) throw envError(name, checked.problem, raw);
  return checked.url;
}

/** A comma-separated list: entries trimmed, empty entries dropped. */
export function envList(env: Env, name: string): string[] {
  const raw = envString(env, name);
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
