// The caller ID rule every carrier's placer shares. The originator port the placers implement is the
// outbound room's (src/outbound/ports.ts).
import { CarrierApiError } from '../errors.js';
import type { CarrierDial } from '../outbound/ports.js';

/**
 * The caller ID of a call: the request's, else the placer's default (a number this server answers).
 * With neither the carrier would refuse the call, so it is refused here, as no retry can mend it.
 */
export function callerIdFor(
  carrier: string,
  label: string,
  request: CarrierDial,
  fallback: string | null,
): string {
  const from = request.from ?? fallback;
  if (from === null) {
    throw new CarrierApiError(
      carrier,
      `${label} create call: no caller ID (give "from", or route a number)`,
      {
        retryable: false,
      },
    );
  }
  return from;
}
