// Placing outbound calls through Vonage's Voice API (docs/protocols/vonage.md section 9): the
// call's answer URL is our answer route, so an answered call is bridged exactly as an inbound one;
// every status event, and the machine-detection results, come to our event route. The outbound
// context's reference rides in both URLs' query (the context itself stays in the store): signed
// webhooks sign the body, not the URL, and the reference carries its own HMAC binding.
import { CarrierApiError } from '../../errors.js';
import type { CarrierCallState } from '../call-status.js';
import type { CallPlacer, CarrierDial } from '../../outbound/ports.js';
import { callerIdFor } from '../placer.js';
import type { VonageRest } from './rest.js';

/** Seconds Vonage lets the phone ring before the call ends as `timeout`. */
export const VONAGE_RINGING_TIMER_S = 30;
/** Seconds detection waits for a beep after calling a machine (unverified range: 45 to 120). */
export const VONAGE_BEEP_TIMEOUT_S = 45;
/** The query parameter of our webhook URLs that carries the outbound context's reference. */
export const VONAGE_CONTEXT_PARAM = 'context';

export interface VonagePlacerOptions {
  rest: VonageRest;
  /** Base URL Vonage reaches this server at (PUBLIC_URL), read at each call. */
  publicUrl: () => string;
  /** Caller ID when a request names none: one of the numbers this server answers. */
  defaultFrom: string | null;
}

export function createVonagePlacer(opts: VonagePlacerOptions): CallPlacer {
  return {
    carrier: 'vonage',
    detectsMachines: true,

    async place(request: CarrierDial) {
      const from = callerIdFor('vonage', 'Vonage', request, opts.defaultFrom);
      const base = opts.publicUrl().replace(/\/+$/, '');
      const context = new URLSearchParams({ [VONAGE_CONTEXT_PARAM]: request.context });
      // `direction=outbound` tells the answer route the call is one we placed (routes.ts).
      const answer = new URLSearchParams({ direction: 'outbound', [VONAGE_CONTEXT_PARAM]: request.context });
      let state: CarrierCallState;
      try {
        state = await opts.rest.originate({
          to: request.to,
          from,
          answerUrl: `${base}/carriers/vonage/answer?${answer}`,
          eventUrl: `${base}/carriers/vonage/events?${context}`,
          ringingTimerS: VONAGE_RINGING_TIMER_S,
          // The verdict comes as events while the call goes on; `beep_start` ends the greeting.
          ...(request.detectMachine
            ? {
                machineDetection: {
                  behavior: 'continue' as const,
                  mode: 'detect_beep' as const,
                  beepTimeoutS: VONAGE_BEEP_TIMEOUT_S,
                },
              }
            : {}),
        });
      } catch (err) {
        if (err instanceof CarrierApiError) throw err;
        // A number Vonage cannot take (not E.164): the same request would fail again.
        throw new CarrierApiError('vonage', `Vonage create call: ${(err as Error).message}`, {
          retryable: false,
          cause: err,
        });
      }
      return { callSid: state.callSid };
    },

    status: (callSid: string) => opts.rest.status(callSid),

    // The REST client already takes a 404 as a call that has ended.
    hangup: (callSid: string) => opts.rest.hangup(callSid),
  };
}
