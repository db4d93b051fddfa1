// The console is a client of the public admin API (docs/console.md): same-origin requests carrying
// the session cookie, and the CSRF header on every request that changes something. Its paths and
// types come from the wire contract (src/api/operations.ts), the same schemas /openapi.json is made
// of: a path the contract lacks, or a field its schemas lack, fails the type-check.
import type { Static, TSchema } from '@sinclair/typebox';
import type { Operations } from '../../src/api/index.js';

/** An answer other than 2xx, with the `{"error": {"code", "message"}}` body the API sends. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onSignedOut: () => void = () => {};

/** The token the session answer carried; sent back as `X-Callbridge-CSRF` on writes. */
export function setCsrf(token: string | null): void {
  csrfToken = token;
}

/** Called when any request answers 401: the session ended elsewhere (expired, signed out). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

type Method = 'get' | 'post' | 'delete';
export type Path = keyof Operations;
/** The paths of the contract that answer `method`. */
export type PathOf<M extends Method> = {
  [P in Path]: M extends keyof Operations[P] ? P : never;
}[Path];
type Operation<P extends Path, M extends Method> = M extends keyof Operations[P] ? Operations[P][M] : never;

type StaticOf<S> = S extends TSchema ? Static<S> : never;
/** What a successful answer carries: the first 2xx the operation declares; nothing for a 204. */
type Answer<O> = O extends { response: infer R }
  ? 200 extends keyof R
    ? StaticOf<R[200]>
    : 201 extends keyof R
      ? StaticOf<R[201]>
      : 202 extends keyof R
        ? StaticOf<R[202]>
        : undefined
  : never;
type ParamsOf<O> = O extends { params: infer S } ? { params: StaticOf<S> } : { params?: never };
/**
 * Query values as the console has them: the names are the contract's, the values may be the text
 * a person typed (the server checks them); numbers go out as their text.
 */
type QueryOf<O> = O extends { querystring: infer S }
  ? { query?: { [K in keyof StaticOf<S>]?: StaticOf<S>[K] | string } }
  : { query?: never };
type BodyOf<O> = O extends { body: { content: { 'application/json': { schema: infer J } } } }
  ? { json: StaticOf<J> } | { csv: string }
  : O extends { body: infer S }
    ? { json: StaticOf<S> }
    : never;
export type Options<P extends Path, M extends Method> = ParamsOf<Operation<P, M>> &
  QueryOf<Operation<P, M>> &
  (M extends 'post' ? { body?: BodyOf<Operation<P, M>> } : unknown);

/** The URL of `path` with its `{name}` parameters filled in and the query's given values. */
export function url<P extends Path>(
  path: P,
  options: { params?: Record<string, string>; query?: Record<string, unknown> } = {},
): string {
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(options.params?.[name] ?? ''),
  );
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? filled : `${filled}?${text}`;
}

interface RequestOptions {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  body?: { json: unknown } | { csv: string };
}

async function request(method: Method, path: Path, options: RequestOptions): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'get' && csrfToken !== null) headers['x-callbridge-csrf'] = csrfToken;
  let payload: string | undefined;
  const { body } = options;
  if (body !== undefined && 'json' in body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body !== undefined) {
    headers['content-type'] = 'text/csv';
    payload = body.csv;
  }
  const target = url(path, options);
  const res = await fetch(target, {
    method: method.toUpperCase(),
    headers,
    body: payload,
    credentials: 'same-origin',
  });
  if (res.status === 204) return undefined;
  const text = await res.text();
  const parsed = text === '' ? undefined : safeJson(text);
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    if (res.status === 401 && path !== '/v1/session') onSignedOut();
    throw new ApiError(res.status, error?.code ?? 'HTTP_' + res.status, error?.message ?? res.statusText);
  }
  return parsed;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// The answer is what the contract says `path` answers: the server's routes take their schemas
// from the same table (test/console/contract.test.ts holds the two to /openapi.json).
export const get = <P extends PathOf<'get'>>(path: P, ...options: OptionalIfEmpty<Options<P, 'get'>>) =>
  request('get', path, (options[0] ?? {}) as RequestOptions) as Promise<Answer<Operation<P, 'get'>>>;
export const post = <P extends PathOf<'post'>>(path: P, ...options: OptionalIfEmpty<Options<P, 'post'>>) =>
  request('post', path, (options[0] ?? {}) as RequestOptions) as Promise<Answer<Operation<P, 'post'>>>;
export const del = <P extends PathOf<'delete'>>(path: P, ...options: OptionalIfEmpty<Options<P, 'delete'>>) =>
  request('delete', path, (options[0] ?? {}) as RequestOptions) as Promise<Answer<Operation<P, 'delete'>>>;

/** Options may be left out when none is required (no path parameter). */
type OptionalIfEmpty<T> = T extends { params: Record<string, unknown> } ? [T] : [T?];

/** A query string of the given values, leaving out empty ones (for the console's own addresses). */
export function query(values: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** A message for an operator: the API's own words when it gave some. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
