// The webhook that announces a call (Twilio's voice URL, another carrier's answer URL), as every
// simulated carrier sends it: no redirects followed, bounded in time, the caller may give up; the
// server's JSON error read when it refuses, and the observer feed it offers picked up.

import { OBSERVER_HEADER } from '../../call/carrier-port.js';

export { OBSERVER_HEADER };

export interface WebhookRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** The caller giving up before the call is answered. */
  signal?: AbortSignal;
}

export type WebhookResponse =
  | { ok: true; status: number; body: string; contentType: string; observerToken: string | undefined }
  | { ok: false; error: string };

/** Sends a carrier's webhook and reads the answer; any non-2xx status is a failure with its reason. */
export async function sendWebhook(req: WebhookRequest, what: string): Promise<WebhookResponse> {
  let response: Response;
  let body: string;
  try {
    response = await fetch(req.url, {
      method: req.method ?? 'POST',
      headers: req.headers,
      ...(req.body === undefined ? {} : { body: req.body }),
      // A carrier does not chase redirects of a webhook: a 3xx is a misconfigured endpoint.
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(req.timeoutMs), ...(req.signal ? [req.signal] : [])]),
    });
    body = await response.text();
  } catch (err) {
    return { ok: false, error: `${what} ${req.url} unreachable: ${describeFetchError(err)}` };
  }
  if (response.status < 200 || response.status > 299) {
    return { ok: false, error: `${what} answered HTTP ${response.status}${errorDetail(body)}` };
  }
  const token = response.headers.get(OBSERVER_HEADER)?.trim();
  return {
    ok: true,
    status: response.status,
    body,
    contentType: response.headers.get('content-type') ?? '',
    observerToken: token || undefined,
  };
}

/** The server's JSON error message when it sent one, so the user sees why it refused. */
export function errorDetail(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return `: ${message}`;
  } catch {
    // Not our JSON error shape: the status says enough.
  }
  return '';
}

export function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'no answer in time';
  if (err instanceof Error && err.name === 'AbortError') return 'the caller gave up';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
