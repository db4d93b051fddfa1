// One HTTP request to a carrier's REST API, bounded by a timeout that also covers the body. A
// request that got no answer is a retryable CarrierApiError; an answer of any status is returned
// for the client to judge (an already-ended call is not an error, say).
import { CarrierApiError } from '../errors.js';

export interface CarrierRequest {
  carrier: string;
  /** What the request does, for messages: `hang up call`. Never holds request data. */
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | URLSearchParams;
  timeoutMs: number;
}

export interface CarrierResponse {
  status: number;
  /** The parsed JSON body, or undefined when it was empty or not JSON. */
  body: unknown;
}

/** The headers and body of a JSON request with the given authorization (a GET carries no body). */
export function jsonExchange(
  authorization: string,
  body?: unknown,
): Pick<CarrierRequest, 'headers' | 'body'> {
  if (body === undefined) return { headers: { authorization, accept: 'application/json' } };
  return {
    headers: { authorization, accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

/** Caps what is read of an answer: carrier answers are a few hundred bytes. */
const MAX_RESPONSE_CHARS = 1024 * 1024;

export async function carrierRequest(req: CarrierRequest): Promise<CarrierResponse> {
  const signal = AbortSignal.timeout(req.timeoutMs);
  let response: Response;
  let text: string;
  try {
    response = await fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal,
      redirect: 'manual',
    });
    // Read inside the try: the timeout also bounds a body that trickles in.
    text = await response.text();
  } catch (err) {
    const reason = signal.aborted ? `timed out after ${req.timeoutMs} ms` : 'network error';
    throw new CarrierApiError(req.carrier, `${req.carrier} ${req.operation}: ${reason}`, {
      retryable: true,
      cause: err,
    });
  }
  let body: unknown;
  if (text !== '' && text.length <= MAX_RESPONSE_CHARS) {
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  }
  return { status: response.status, body };
}
