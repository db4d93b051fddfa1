// Placing outbound calls through Exotel (docs/protocols/exotel.md section 9): `Calls/connect` rings
// the number (`From`), then runs the flow (`Url`) whose Voicebot applet asks our
// `GET /carriers/exotel/stream` where to stream, so an answered call is bridged exactly as an
// inbound one. The outbound context's reference goes as `CustomField`; whether Exotel passes it on to the
// applet's request is unverified, so it is also kept here by Exotel's call sid, from the moment the
// create request answers, for the applet's request and the status callback to find.
import { CarrierApiError } from '../../errors.js';
import type { CarrierCallState } from '../call-status.js';
import type { CallPlacer, CarrierDial } from '../../outbound/ports.js';
import { callerIdFor } from '../placer.js';
import type { ExotelRest } from './rest.js';

/** Seconds Exotel lets the phone ring. */
const RING_TIMEOUT_S = 30;
/** A call's context is kept this long after it was placed: ringing, then the flow reaching the applet. */
export const CONTEXT_TTL_MS = 10 * 60_000;
const MAX_CONTEXTS = 20_000;

export interface ExotelPlacerOptions {
  rest: ExotelRest;
  /** The flow holding the Voicebot applet (EXOTEL_FLOW_URL). */
  flowUrl: string;
  /** Base URL Exotel reaches this server at (PUBLIC_URL), read at each call. */
  publicUrl: () => string;
  /** Caller ID when a request names none: one of the numbers this server answers (an ExoPhone). */
  defaultFrom: string | null;
  now?: () => number;
}

/** The contexts of calls placed lately, by call sid; expired and excess entries are forgotten, oldest first. */
class PlacedContexts {
  readonly #entries = new Map<string, { ref: string; expiresAtMs: number }>();
  constructor(private readonly now: () => number) {}

  set(callSid: string, ref: string): void {
    const now = this.now();
    for (const [sid, entry] of this.#entries) {
      if (entry.expiresAtMs > now && this.#entries.size < MAX_CONTEXTS) break;
      this.#entries.delete(sid);
    }
    this.#entries.set(callSid, { ref, expiresAtMs: now + CONTEXT_TTL_MS });
  }

  get(callSid: string): string | null {
    const entry = this.#entries.get(callSid);
    return entry && entry.expiresAtMs > this.now() ? entry.ref : null;
  }
}

export function createExotelPlacer(opts: ExotelPlacerOptions): CallPlacer {
  const contexts = new PlacedContexts(opts.now ?? Date.now);
  const statusCallback = () => `${opts.publicUrl().replace(/\/+$/, '')}/carriers/exotel/status`;

  return {
    carrier: 'exotel',
    // Exotel offers no answering-machine detection (docs/protocols/answering-machine-detection.md section 7).
    detectsMachines: false,

    async place(request: CarrierDial) {
      if (request.detectMachine) {
        throw new CarrierApiError(
          'exotel',
          'Exotel has no answering-machine detection: place the call without it',
          {
            retryable: false,
          },
        );
      }
      const callerId = callerIdFor('exotel', 'Exotel', request, opts.defaultFrom);
      const call = await opts.rest.originate({
        to: request.to,
        callerId,
        flowUrl: opts.flowUrl,
        customField: request.context,
        statusCallback: statusCallback(),
        timeoutS: RING_TIMEOUT_S,
      });
      contexts.set(call.callSid, request.context);
      return { callSid: call.callSid };
    },

    async status(callSid: string): Promise<CarrierCallState> {
      try {
        return await opts.rest.status(callSid);
      } catch (err) {
        // A call Exotel does not know: ended long ago, or never placed.
        if (err instanceof CarrierApiError && err.status === 404) {
          return { callSid, status: 'unknown', carrierStatus: 'unknown' };
        }
        throw err;
      }
    },

    // Exotel's classic API cannot hang up a call: an answered one ends when its stream closes (the
    // applet ends and the flow finishes), a ringing one rings out after `TimeOut`. Nothing to ask.
    async hangup() {},

    contextOf(callSid: string): string | null {
      return contexts.get(callSid);
    },
  };
}
