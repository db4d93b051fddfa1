// The error every carrier REST client raises. Retries branch on `retryable` and `code`, never on a
// status compared in several places: 5xx, 429, timeouts and network errors may be retried; other
// 4xx may not.

export const CARRIER_API_ERROR_CODE = 'CALLBRIDGE_CARRIER_API';

export class CarrierApiError extends Error {
  readonly code = CARRIER_API_ERROR_CODE;
  readonly carrier: string;
  readonly retryable: boolean;
  /** HTTP status, absent when no response arrived. */
  readonly status: number | undefined;
  /** The carrier's own error code from the response body, when it sent a short one. */
  readonly carrierCode: string | undefined;
  constructor(
    carrier: string,
    message: string,
    opts: { retryable: boolean; status?: number; carrierCode?: string; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'CarrierApiError';
    this.carrier = carrier;
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.carrierCode = opts.carrierCode;
  }
}

/** Whether an HTTP status from a carrier API is worth retrying. */
export function retryableStatus(status: number): boolean {
  return status >= 500 || status === 429;
}
