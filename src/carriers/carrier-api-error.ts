// A carrier REST call that failed, for every carrier's REST client. Retries branch on `retryable`
// (5xx, 429, timeouts, network errors) and on `code`, never on the message.

export const CARRIER_API_ERROR_CODE = 'CALLBRIDGE_CARRIER_API';

export class CarrierApiError extends Error {
  readonly code = CARRIER_API_ERROR_CODE;
  readonly carrier: string;
  readonly retryable: boolean;
  /** HTTP status, absent when no response arrived. */
  readonly status: number | undefined;
  /** The carrier's own error code or type from the response body, when it sent one. */
  readonly carrierCode: string | undefined;
  constructor(
    message: string,
    opts: { carrier: string; retryable: boolean; status?: number; carrierCode?: string; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.name = 'CarrierApiError';
    this.carrier = opts.carrier;
    this.retryable = opts.retryable;
    this.status = opts.status;
    this.carrierCode = opts.carrierCode;
  }
}

/** 5xx and 429 are worth trying again; any other refusal will be refused again. */
export function retryableStatus(status: number): boolean {
  return status >= 500 || status === 429;
}
