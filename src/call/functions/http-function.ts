// Runs one profile HTTP function for a client-side `FunctionCallRequest` (docs/protocols/agent.md section 7:
// every client-side request is answered with a `FunctionCallResponse` carrying the same `id`).
// The agent waits for the answer, so this never throws and never outlives `fn.timeoutMs`: every
// failure becomes an error content the agent can read and recover from.
//
// Request: POST `fn.url`, JSON body `{"call":{callSid,from,to,profile},"name":…,"arguments":{…}}`.
//   content-type             application/json
//   x-callbridge-timestamp   unix seconds when the request was signed
//   x-callbridge-signature   `sha256=<hex HMAC-SHA256(fn.secret, "<timestamp>.<raw body>")>`, only
//                            when the function has a secret
// The signature covers the timestamp, so a receiver that checks both (`verifyCallbridgeSignature`)
// rejects a captured request replayed later.
import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../auth.js';
import type { HttpFunction } from '../../config/types.js';

export interface HttpFunctionCall {
  callSid: string;
  from: string;
  to: string;
  profile: string;
}

export type HttpFunctionOutcome = 'ok' | 'error' | 'timeout' | 'bad_arguments';

export interface HttpFunctionResult {
  /** What goes into `FunctionCallResponse.content`. */
  content: string;
  outcome: HttpFunctionOutcome;
  durationMs: number;
}

export interface HttpFunctionOptions {
  fetch?: typeof fetch;
  /** Wall clock in ms since the epoch: signs the timestamp header and measures the duration. */
  nowMs?: () => number;
  /** Answer bytes kept for the agent; the rest is cut. */
  maxContentBytes?: number;
}

/** A function answer is read by a language model: a few KiB is plenty, more only costs latency. */
export const HTTP_FUNCTION_MAX_CONTENT_BYTES = 16 * 1024;

/** Replay window a receiver should allow between signing and checking. */
export const CALLBRIDGE_SIGNATURE_TOLERANCE_S = 300;

/** Used when a function carries no usable timeout: the agent must never wait without a bound. */
const FALLBACK_TIMEOUT_MS = 10_000;

/** Marks a cut answer, so the model knows it did not see everything. */
const TRUNCATED_SUFFIX = ' …[truncated]';

/** Content for a 2xx answer with an empty body: the agent always gets something to read. */
const EMPTY_OK_CONTENT = '{"ok":true}';

export async function runHttpFunction(
  fn: HttpFunction,
  call: HttpFunctionCall,
  argumentsJson: string,
  opts: HttpFunctionOptions = {},
): Promise<HttpFunctionResult> {
  const now = opts.nowMs ?? Date.now;
  const doFetch = opts.fetch ?? fetch;
  const maxBytes = opts.maxContentBytes ?? HTTP_FUNCTION_MAX_CONTENT_BYTES;
  const startedMs = now();
  const done = (outcome: HttpFunctionOutcome, content: string): HttpFunctionResult => ({
    content,
    outcome,
    durationMs: Math.max(0, now() - startedMs),
  });

  const args = parseArguments(argumentsJson);
  if (args === undefined) {
    return done(
      'bad_arguments',
      errorContent(
        `${fn.name} was called with arguments that are not a JSON object; call it again with valid arguments`,
      ),
    );
  }

  const body = JSON.stringify({
    call: { callSid: call.callSid, from: call.from, to: call.to, profile: call.profile },
    name: fn.name,
    arguments: args,
  });
  const timestamp = String(Math.floor(startedMs / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-callbridge-timestamp': timestamp,
  };
  if (fn.secret) headers['x-callbridge-signature'] = signCallbridgeBody(fn.secret, timestamp, body);

  const timeoutMs = Number.isFinite(fn.timeoutMs) && fn.timeoutMs > 0 ? fn.timeoutMs : FALLBACK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await doFetch(fn.url, {
      method: 'POST',
      headers,
      body,
      signal,
      // A redirect would carry the signed request somewhere the profile never named.
      redirect: 'manual',
    });
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel().catch(() => undefined);
      return done(
        'error',
        errorContent(
          `${fn.name} failed (HTTP ${response.status}); tell the caller you could not do that right now`,
        ),
      );
    }
    const text = await readCapped(response, maxBytes);
    return done('ok', text === '' ? EMPTY_OK_CONTENT : text);
  } catch (err) {
    if (isTimeout(err, signal)) {
      return done(
        'timeout',
        errorContent(
          `${fn.name} timed out after ${timeoutMs} ms; tell the caller you could not check right now`,
        ),
      );
    }
    // The network error's message can name internal hosts: the agent only needs to know it failed.
    return done(
      'error',
      errorContent(`${fn.name} could not be reached; tell the caller you could not do that right now`),
    );
  }
}

/** `sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>` */
export function signCallbridgeBody(secret: string, timestamp: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
}

/**
 * For receivers: true when the signature matches the raw body and the timestamp is within
 * `toleranceS` of `nowMs` (either side, for clock skew). Compares in constant time.
 */
export function verifyCallbridgeSignature(
  secret: string,
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  rawBody: string | Uint8Array,
  nowMs: number,
  toleranceS = CALLBRIDGE_SIGNATURE_TOLERANCE_S,
): boolean {
  if (!timestampHeader || !signatureHeader || !/^\d{1,12}$/.test(timestampHeader)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestampHeader)) > toleranceS) return false;
  return constantTimeEqual(signatureHeader, signCallbridgeBody(secret, timestampHeader, rawBody));
}

/** The agent's arguments string as an object; `undefined` when it is not one. Empty means none. */
function parseArguments(json: string): Record<string, unknown> | undefined {
  if (json.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(json);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return value as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Reads at most `maxBytes` of the body (stopping the download there), cut at a UTF-8 boundary. */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  let cut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
    if (total > maxBytes) {
      cut = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  const bytes = Buffer.concat(chunks, total);
  if (!cut) return bytes.toString('utf8');
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8') + TRUNCATED_SUFFIX;
}

function isTimeout(err: unknown, signal: AbortSignal): boolean {
  if (err instanceof Error && err.name === 'TimeoutError') return true;
  return signal.aborted && (signal.reason as Error | undefined)?.name === 'TimeoutError';
}

function errorContent(message: string): string {
  return JSON.stringify({ error: message });
}
