// Placing outbound calls through Telnyx's Call Control (docs/protocols/telnyx.md section 9):
// `POST /v2/calls` with our events webhook and the outbound context's reference in `client_state`, which
// Telnyx returns on every webhook of the call. No media stream is asked for here: the stream token is
// bound to the call id, which Telnyx names only in its answer, so the routes start the stream on
// `call.answered` (routes.ts). Detection asks for the greeting's end, so a voicemail waits for it.
import { CarrierApiError } from '../../errors.js';
import type { CarrierCallState } from '../call-status.js';
import type { CallPlacer, CarrierDial } from '../../outbound/ports.js';
import { callerIdFor } from '../placer.js';
import { encodeClientState } from './client-state.js';
import type { TelnyxAmdMode, TelnyxRest } from './rest.js';
import { TELNYX_EVENTS_PATH } from './routes.js';

/** Seconds Telnyx lets the phone ring before the call ends with `timeout`. */
const RING_TIMEOUT_S = 30;
/**
 * `greeting_end` reports the end of a voicemail greeting whether it ends in a beep or in silence;
 * `detect_beep` reports it only when it hears a beep.
 */
export const TELNYX_AMD_MODE: TelnyxAmdMode = 'greeting_end';
/**
 * How long detection may listen for the greeting's end, as long as Twilio's (unverified: the field's
 * name is from Telnyx's SDK types, not from the protocol notes).
 */
export const TELNYX_AMD_CONFIG: Readonly<Record<string, number>> = Object.freeze({
  greeting_total_analysis_time_millis: 30_000,
});

export interface TelnyxPlacerOptions {
  rest: TelnyxRest;
  /** Base URL Telnyx reaches this server at (PUBLIC_URL), read at each call. */
  publicUrl: () => string;
  /** Caller ID when a request names none: one of the numbers this server answers. */
  defaultFrom: string | null;
}

export function createTelnyxPlacer(opts: TelnyxPlacerOptions): CallPlacer {
  return {
    carrier: 'telnyx',
    detectsMachines: true,

    async place(request: CarrierDial) {
      const from = callerIdFor('telnyx', 'Telnyx', request, opts.defaultFrom);
      const call = await opts.rest.originate({
        to: request.to,
        from,
        webhookUrl: `${opts.publicUrl().replace(/\/+$/, '')}${TELNYX_EVENTS_PATH}`,
        clientState: encodeClientState({ ctx: request.context }),
        timeoutSecs: RING_TIMEOUT_S,
        ...(request.detectMachine ? { amd: TELNYX_AMD_MODE, amdConfig: { ...TELNYX_AMD_CONFIG } } : {}),
      });
      return { callSid: call.callSid };
    },

    status(callSid: string): Promise<CarrierCallState> {
      return opts.rest.status(callSid);
    },

    async hangup(callSid: string) {
      try {
        // 422 with code 90018 (already ended) is success in the REST client already.
        await opts.rest.hangup(callSid);
      } catch (err) {
        // A call Telnyx no longer knows has ended, which was the point.
        if (err instanceof CarrierApiError && err.status === 404) return;
        throw err;
      }
    },
  };
}
