// How the simulated carrier posts a webhook: bounded by the call's timeout and the caller giving
// up, never following redirects (a carrier does not), and reading the server's answer in full.

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export type WebhookResult =
  { ok: true; status: number; body: string; headers: Headers } | { ok: false; error: string };

export async function postWebhook(post: WebhookPost): Promise<WebhookResult> {
  try {
    const response = await fetch(post.url, {
      method: 'POST',
      headers: post.headers,
      body: post.body,
      redirect: 'manual',
      signal: AbortSignal.any([AbortSignal.timeout(post.timeoutMs), ...(post.signal ? [post.signal] : [])]),
    });
    const body = await response.text();
    return { ok: true, status: response.status, body, headers: response.headers };
  } catch (err) {
    return { ok: false, error: `${post.url} unreachable: ${describeFetchError(err)}` };
  }
}

/** `HTTP 403: <the server's message>`, the message only when it is the project's JSON error. */
export function describeRefusal(status: number, body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return `HTTP ${status}: ${message}`;
  } catch {
    // Not our JSON error shape: the status says enough.
  }
  return `HTTP ${status}`;
}

export function describeFetchError(err: unknown): string {
  if (err instanceof Error && err.name === 'TimeoutError') return 'no answer in time';
  if (err instanceof Error && err.name === 'AbortError') return 'the caller gave up';
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** A ws:// or wss:// URL, or why the carrier would not open it. */
export function checkMediaUrl(raw: string, element: string): string | Error {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return new Error(`${element} is not an absolute URL`);
  }
  if (url.protocol !== 'wss:' && url.protocol !== 'ws:')
    return new Error(`${element} must be a wss:// (or ws://) URL`);
  return raw;
}
