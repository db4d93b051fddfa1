// The console is a client of the public admin API (docs/console.md): same-origin requests carrying
// the session cookie, and the CSRF header on every request that changes something.

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

type Body = { json: unknown } | { csv: string } | undefined;

export async function request<T>(method: string, path: string, body?: Body): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken !== null) headers['x-callbridge-csrf'] = csrfToken;
  let payload: string | undefined;
  if (body !== undefined && 'json' in body) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body !== undefined) {
    headers['content-type'] = 'text/csv';
    payload = body.csv;
  }
  const res = await fetch(path, { method, headers, body: payload, credentials: 'same-origin' });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const parsed = text === '' ? undefined : safeJson(text);
  if (!res.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    if (res.status === 401 && path !== '/v1/session') onSignedOut();
    throw new ApiError(res.status, error?.code ?? 'HTTP_' + res.status, error?.message ?? res.statusText);
  }
  return parsed as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const get = <T>(path: string) => request<T>('GET', path);
export const post = <T>(path: string, json?: unknown) =>
  request<T>('POST', path, json === undefined ? undefined : { json });
export const postCsv = <T>(path: string, csv: string) => request<T>('POST', path, { csv });
export const del = (path: string) => request<void>('DELETE', path);

/** A query string of the given values, leaving out empty ones. */
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
