// Query parameters of the admin API's listings: each given at most once, bounded before it reaches
// the store.
import { BadRequestError } from '../errors.js';

export type RawQuery = Record<string, string | string[] | undefined>;

const MAX_CURSOR_CHARS = 1_024;

/** One value of a query parameter; a parameter given twice is ambiguous and refused. */
export function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new BadRequestError(`${name} may be given once`);
  return value;
}

export function limitParam(query: RawQuery, fallback: number, max: number): number {
  const raw = single(query, 'limit');
  if (raw === undefined) return fallback;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || limit < 1 || limit > max) {
    throw new BadRequestError(`limit must be an integer from 1 to ${max}`);
  }
  return limit;
}

export function cursorParam(query: RawQuery): string | undefined {
  const raw = single(query, 'cursor');
  if (raw === undefined) return undefined;
  // The store decides whether it handed the cursor out; this only bounds what reaches it.
  if (raw.length === 0 || raw.length > MAX_CURSOR_CHARS) {
    throw new BadRequestError('cursor is not one a previous page handed out');
  }
  return raw;
}

/** Refuses parameters the route does not know, so a misspelt filter is not silently ignored. */
export function knownParams(query: RawQuery, names: readonly string[]): void {
  const unknown = Object.keys(query).filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw new BadRequestError(
      `unknown query parameter ${JSON.stringify(unknown[0]!.slice(0, 40))}; known: ${names.join(', ')}`,
    );
  }
}
