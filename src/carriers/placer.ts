// What a carrier offers for placing outbound calls, in the carriers' common words. app.ts composes
// the placers of the enabled carriers into the outbound room's one Originator
// (src/outbound/ports.ts), so neither room imports the other.
import { CarrierApiError } from '../errors.js';
import type { CarrierCallState } from './call-status.js';

export interface PlaceCallRequest {
  to: string;
  /** E.164 caller ID; null: the carrier's default for this server. */
  from: string | null;
  /** The reference to the call's outbound context (src/call/outbound-context.ts), carried through the call. */
  context: string;
  /** Whether to ask for answering-machine detection, with the end of a voicemail greeting. */
  detectMachine: boolean;
}

export interface CallPlacer {
  readonly carrier: string;
  /** Whether the carrier can tell a person from an answering machine (`detectMachine` is honoured). */
  readonly detectsMachines: boolean;
  /** Asks the carrier to place the call; resolves with its call id once it accepted. */
  place(request: PlaceCallRequest): Promise<{ callSid: string }>;
  status(callSid: string): Promise<CarrierCallState>;
  /** Ends the call whatever its state; an already-ended call is not an error. */
  hangup(callSid: string): Promise<void>;
  /**
   * The context reference of a call placed here lately, for a carrier whose webhooks may not carry it
   * back (Exotel's applet request); null when this instance did not place the call or forgot it.
   */
  contextOf?(callSid: string): string | null;
}

/**
 * The caller ID of a call: the request's, else the placer's default (a number this server answers).
 * With neither the carrier would refuse the call, so it is refused here, as no retry can mend it.
 */
export function callerIdFor(
  carrier: string,
  label: string,
  request: PlaceCallRequest,
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
