// Every error callbridge raises on purpose, with a stable code callers branch on.
import createError from '@fastify/error';

export const ConfigError = createError<[string]>('CALLBRIDGE_CONFIG_INVALID', '%s', 500);

export const BadRequestError = createError<[string]>('CALLBRIDGE_BAD_REQUEST', '%s', 400);
export const UnauthorizedError = createError<[string]>('CALLBRIDGE_UNAUTHORIZED', '%s', 401);
export const BadSignatureError = createError<[string]>('CALLBRIDGE_BAD_SIGNATURE', '%s', 403);
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
    case 413:
      return 'CALLBRIDGE_BODY_TOO_LARGE';
    case 415:
      return 'CALLBRIDGE_UNSUPPORTED_MEDIA_TYPE';
    case 429:
      return 'CALLBRIDGE_RATE_LIMITED';
    case 503:
      return 'CALLBRIDGE_UNAVAILABLE';
    default:
      return status >= 500 ? 'CALLBRIDGE_INTERNAL' : 'CALLBRIDGE_BAD_REQUEST';
  }
}
