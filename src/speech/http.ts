// One request to the speech service's REST side (docs/protocols/speech-service.md): credentials,
// a timeout on every request, bounded answers, and failures as typed errors that say whether the
// same request may work later. Network trouble, timeouts, 429 (too many connections) and 5xx are
// worth another try; any other refusal is about the request itself and will fail the same way.
import { retryableStatus, SpeechServiceError } from '../errors.js';

export interface SpeechApi {
  /** Speech REST host, no trailing slash. */
  baseUrl: string;
  /** `Token <key>` or `Bearer <jwt>`; never logged, never in an error message. */
  authorization: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

export interface SpeechRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  accept?: string;
  /** Largest answer read; past it the request fails (not retryable). */
  maxBytes: number;
  /** Ends the request early (shutdown); an abort is retryable. */
  signal?: AbortSignal;
}

export interface SpeechAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** An error body is read up to this size, for its code and message. */
const MAX_ERROR_BYTES = 16 * 1024;
const MAX_MESSAGE_CHARS = 200;

export async function speechRequest(api: SpeechApi, request: SpeechRequest): Promise<SpeechAnswer> {
  const url = new URL(`${api.baseUrl}${request.path}`);
  for (const [name, value] of Object.entries(request.query ?? {})) url.searchParams.set(name, value);
  const what = `${request.method} ${request.path}`;
  const timeout = AbortSignal.timeout(api.timeoutMs);
  const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
  const headers: Record<string, string> = {
    authorization: api.authorization,
    accept: request.accept ?? 'application/json',
  };
  if (request.json !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await (api.fetch ?? fetch)(url, {
      method: request.method,
      headers,
      ...(request.json !== undefined ? { body: JSON.stringify(request.json) } : {}),
      signal,
      // A redirect would carry the credentials somewhere the configuration never named.
      redirect: 'manual',
    });
  } catch (err) {
    const reason = timeout.aborted
      ? `no answer within ${api.timeoutMs} ms`
      : request.signal?.aborted
        ? 'stopped'
        : `could not be reached (${networkCause(err)})`;
    throw new SpeechServiceError(`${what}: ${reason}`, { retryable: true });
  }
  if (response.status < 200 || response.status > 299) {
    const body = await readCapped(response, MAX_ERROR_BYTES).catch(() => Buffer.alloc(0));
    const { serviceCode, message } = describeErrorBody(body);
    const retryable = retryableStatus(response.status);
    const detail = [serviceCode, message].filter((part) => part !== undefined).join(': ');
    throw new SpeechServiceError(`${what} answered HTTP ${response.status}${detail ? ` ${detail}` : ''}`, {
      retryable,
      status: response.status,
      ...(serviceCode !== undefined ? { serviceCode } : {}),
    });
  }
  let body: Buffer;
  try {
    body = await readCapped(response, request.maxBytes);
  } catch (err) {
    if (err instanceof AnswerTooLarge) {
      throw new SpeechServiceError(`${what}: the answer is over ${request.maxBytes} bytes`, {
        retryable: false,
      });
    }
    throw new SpeechServiceError(`${what}: the answer was cut off`, { retryable: true });
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body };
}

class AnswerTooLarge extends Error {}

async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new AnswerTooLarge();
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new AnswerTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/**
 * The service's code and message from an error body. Its envelope is not specified (section 7 of
 * the reference), so the usual places are tried: `err_code`/`err_msg`, `code`/`message`, `error.code`.
 */
function describeErrorBody(body: Buffer): { serviceCode?: string; message?: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return {};
  }
  return describeErrorJson(parsed);
}

/** The service's error code and message from a parsed error body, each bounded and one line. */
export function describeErrorJson(parsed: unknown): { serviceCode?: string; message?: string } {
  if (typeof parsed !== 'object' || parsed === null) return {};
  const top = parsed as Record<string, unknown>;
  const nested =
    typeof top.error === 'object' && top.error !== null ? (top.error as Record<string, unknown>) : {};
  const pick = (...values: unknown[]) => values.find((v): v is string => typeof v === 'string' && v !== '');
  const serviceCode = pick(top.err_code, top.code, nested.code)
    ?.slice(0, 64)
    .replace(/[^\w.-]/g, '_');
  const message = pick(top.err_msg, top.message, top.description, nested.message)
    ?.replace(/\s+/g, ' ')
    .slice(0, MAX_MESSAGE_CHARS);
  return { ...(serviceCode ? { serviceCode } : {}), ...(message ? { message } : {}) };
}

/** The cause's code (ECONNREFUSED, ENOTFOUND…), never its message, which may name internal hosts. */
function networkCause(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : 'network error';
}
