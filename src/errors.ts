// Every error callbridge raises on purpose, with a stable code callers branch on.
import createError from '@fastify/error';

export const ConfigError = createError<[string]>('CALLBRIDGE_CONFIG_INVALID', '%s', 500);

export const BadRequestError = createError<[string]>('CALLBRIDGE_BAD_REQUEST', '%s', 400);
export const UnauthorizedError = createError<[string]>('CALLBRIDGE_UNAUTHORIZED', '%s', 401);
export const BadSignatureError = createError<[string]>('CALLBRIDGE_BAD_SIGNATURE', '%s', 403);
/** The key or session is good, its role too low for the route (docs/console.md). */
export const ForbiddenError = createError<[string]>('CALLBRIDGE_FORBIDDEN', '%s', 403);
/** A cookie-authenticated change without the session's anti-forgery header (docs/console.md). */
export const CsrfError = createError<[string]>('CALLBRIDGE_CSRF', '%s', 403);
export const NotFoundError = createError<[string]>('CALLBRIDGE_NOT_FOUND', '%s', 404);
/** The request is sound but the resource's state forbids it (starting a running campaign). */
export const ConflictError = createError<[string]>('CALLBRIDGE_CONFLICT', '%s', 409);
export const BodyTooLargeError = createError<[string]>('CALLBRIDGE_BODY_TOO_LARGE', '%s', 413);
export const RateLimitedError = createError<[string]>('CALLBRIDGE_RATE_LIMITED', '%s', 429);
export const UnavailableError = createError<[string]>('CALLBRIDGE_UNAVAILABLE', '%s', 503);
/** The shared queue holds its limit of events: refused, so the sender retries later. */
export const QueueFullError = createError<[string]>('CALLBRIDGE_QUEUE_FULL', '%s', 503);

/** A carrier media frame that cannot be read; the call may go on without it. */
export const CarrierFrameError = createError<[string]>('CALLBRIDGE_CARRIER_FRAME', '%s', 400);

/** The agent could not be reached or refused the handshake; `retryable` tells the caller what to do. */
export class AgentConnectError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(message: string, opts: { code: string; retryable: boolean; status?: number }) {
    super(message);
    this.name = 'AgentConnectError';
    this.code = opts.code;
    this.retryable = opts.retryable;
    this.status = opts.status;
  }
}

/**
 * A speech service REST request (read, speak, models) that did not succeed. `retryable` says
 * whether the same request may work later (network, timeout, 429, 5xx); `serviceCode` is the
 * service's own code when it sent one (`INVALID_QUERY_PARAMETER`, `PAYLOAD_ERROR`, …).
 */
export class SpeechServiceError extends Error {
  readonly code: 'CALLBRIDGE_SPEECH_REFUSED' | 'CALLBRIDGE_SPEECH_UNAVAILABLE';
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly serviceCode: string | undefined;
  constructor(message: string, opts: { retryable: boolean; status?: number; serviceCode?: string }) {
    super(message);
    this.name = 'SpeechServiceError';
    this.code = opts.retryable ? 'CALLBRIDGE_SPEECH_UNAVAILABLE' : 'CALLBRIDGE_SPEECH_REFUSED';
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.serviceCode = opts.serviceCode;
  }
}

/** The stable code of every carrier REST failure; `retryable` and `status` say what to do about it. */
export const CARRIER_API_ERROR_CODE = 'CALLBRIDGE_CARRIER_API';

/**
 * A carrier's REST API call that failed, whichever carrier. `retryable` is true where the same
 * request may succeed later (5xx, 429, timeouts, network errors); callers branch on it, not on text.
 */
export class CarrierApiError extends Error {
  readonly code = CARRIER_API_ERROR_CODE;
  /** The carrier's name (`twilio`, `telnyx`, …). */
  readonly carrier: string;
  readonly retryable: boolean;
  /** HTTP status, absent when no response arrived. */
  readonly status: number | undefined;
  /** The carrier's own error code from the response body, when it sent one (never its message text). */
  readonly carrierCode: string | number | undefined;
  constructor(
    carrier: string,
    message: string,
    opts: { retryable: boolean; status?: number; carrierCode?: string | number; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'CarrierApiError';
    this.carrier = carrier;
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.carrierCode = opts.carrierCode;
  }
}

/** Whether an HTTP status from a carrier API means the same request may succeed later. */
export function retryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

/** The code of the agent refusing a session because too many are open (its handshake's 429). */
export const AGENT_REFUSED_CODE = 'CALLBRIDGE_AGENT_REFUSED';

/** Maps an HTTP status to the code used when the error did not come with one of ours. */
export function codeForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'CALLBRIDGE_BAD_REQUEST';
    case 401:
      return 'CALLBRIDGE_UNAUTHORIZED';
    case 403:
      return 'CALLBRIDGE_FORBIDDEN';
    case 404:
      return 'CALLBRIDGE_NOT_FOUND';
    case 405:
      return 'CALLBRIDGE_METHOD_NOT_ALLOWED';
    case 409:
      return 'CALLBRIDGE_CONFLICT';
    case 408:
      return 'CALLBRIDGE_REQUEST_TIMEOUT';
    case 413:
      return 'CALLBRIDGE_BODY_TOO_LARGE';
    case 414:
      return 'CALLBRIDGE_URI_TOO_LONG';
    case 415:
      return 'CALLBRIDGE_UNSUPPORTED_MEDIA_TYPE';
    case 429:
      return 'CALLBRIDGE_RATE_LIMITED';
    case 431:
      return 'CALLBRIDGE_HEADERS_TOO_LARGE';
    case 503:
      return 'CALLBRIDGE_UNAVAILABLE';
    default:
      return status >= 500 ? 'CALLBRIDGE_INTERNAL' : 'CALLBRIDGE_BAD_REQUEST';
  }
}
