// One HTTP request to a carrier REST API, bounded by a timeout that covers the body too. Failures
// to get any answer become a retryable CarrierApiError; the caller reads the status and body.
import { CarrierApiError } from './carrier-api-error.js';

export interface RestRequest {
  carrier: string;
  /** Names the request in error messages ("hang up call"). */
  operation: string;
  method: 'GET' | 'POST' | 'DELETE' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

export interface RestResponse {
  status: number;
  /** The JSON body, or undefined when empty or not JSON. */
  body: unknown;
}

/** Largest response body read; carrier answers are small JSON documents. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export async function restRequest(req: RestRequest): Promise<RestResponse> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal,
      // A carrier API does not redirect its call-control requests; following one could send the
      // credentials elsewhere.
      redirect: 'manual',
    });
    text = await readBounded(response);
  } catch (err) {
    const reason = signal.aborted ? `timed out after ${req.timeoutMs} ms` : 'network error';
    throw new CarrierApiError(req.carrier, `${req.carrier} ${req.operation}: ${reason}`, {
      retryable: true,
      cause: err,
    });
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body };
}

async function readBounded(response: Response): Promise<string> {
  if (response.body === null) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    // The rest is dropped: no answer we read is this long, and memory stays bounded.
    if (total > MAX_RESPONSE_BYTES) break;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
