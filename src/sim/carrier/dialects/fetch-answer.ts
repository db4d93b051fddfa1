// One webhook request as a carrier makes it when a call arrives: bounded by a timeout and the
// caller's patience, no redirects followed, and the answer read whole. Failures come back as words
// for the call summary, never as exceptions.
import { OBSERVER_HEADER } from '../../../call/carrier-port.js';

export interface CarrierFetch {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type CarrierFetchOutcome =
  | { ok: true; status: number; contentType: string; observerToken: string | undefined; body: string }
  | { ok: false; error: string };

export async function carrierFetch(req: CarrierFetch): Promise<CarrierFetchOutcome> {
  try {
    const response = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      // A carrier does not chase redirects of a webhook: a 3xx is a misconfigured endpoint.
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(req.timeoutMs), ...(req.signal ? [req.signal] : [])]),
    });
    const body = await response.text();
    return {
      ok: true,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      observerToken: response.headers.get(OBSERVER_HEADER)?.trim() || undefined,
      body,
    };
  } catch (err) {
    return { ok: false, error: `${req.url.split('?')[0]} unreachable: ${describeFetchError(err)}` };
  }
}

/** The server's JSON error `{error: {code, message}}`, when it sent one. */
export function serverError(body: string): { code: string; message: string } | undefined {
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof error?.code === 'string' && typeof error.message === 'string') {
      return { code: error.code, message: error.message };
    }
  } catch {
    // Not our JSON error shape: the status says enough.
  }
  return undefined;
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'no answer in time';
  if (err instanceof Error && err.name === 'AbortError') return 'the caller gave up';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
