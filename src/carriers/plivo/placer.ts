// Placing outbound calls through Plivo's Call API (docs/protocols/plivo.md section 9): the
// call's answer URL is our answer route, so an answered call is bridged exactly as an inbound one;
// the hang-up URL brings the final status and the machine-detection URL the verdict. The outbound
// context's reference (the context stays in the store) rides in each URL's query (Plivo signs the URL with its query), so every webhook
// of the call names its attempt.
//
// Plivo answers a create request with a request UUID, not the call's own CallUUID, which first
// arrives with the call's webhooks (the routes then hand it to the core, which the attempt follows
// from then on). So the id asked about here is a CallUUID, or, for a call no webhook has named yet
// (queued or ringing), the request UUID: the call's paths are tried first, then the request's
// (docs/protocols/plivo.md section 9).
import type { CarrierCallState } from '../call-status.js';
import type { CallPlacer, CarrierDial } from '../../outbound/ports.js';
import { callerIdFor } from '../placer.js';
import type { PlivoRest } from './rest.js';

/** Seconds Plivo lets the phone ring before the call ends unanswered. */
export const PLIVO_RING_TIMEOUT_S = 30;
/** The query parameter of our webhook URLs that carries the outbound context's reference. */
export const PLIVO_CONTEXT_PARAM = 'context';

export const PLIVO_MACHINE_PATH = '/carriers/plivo/machine';

export interface PlivoPlacerOptions {
  rest: PlivoRest;
  /** Base URL Plivo reaches this server at (PUBLIC_URL), read at each call. */
  publicUrl: () => string;
  /** Caller ID when a request names none: one of the numbers this server answers. */
  defaultFrom: string | null;
}

export function createPlivoPlacer(opts: PlivoPlacerOptions): CallPlacer {
  const url = (path: string, context: string) =>
    `${opts.publicUrl().replace(/\/+$/, '')}${path}?${PLIVO_CONTEXT_PARAM}=${encodeURIComponent(context)}`;

  return {
    carrier: 'plivo',
    detectsMachines: true,

    async place(request: CarrierDial) {
      const from = callerIdFor('plivo', 'Plivo', request, opts.defaultFrom);
      const placed = await opts.rest.originate({
        to: request.to,
        from,
        answerUrl: url('/carriers/plivo/answer', request.context),
        hangupUrl: url('/carriers/plivo/hangup', request.context),
        ringTimeoutSec: PLIVO_RING_TIMEOUT_S,
        // Plivo reports only machine or not: the end of the greeting is judged from the audio
        // (docs/protocols/answering-machine-detection.md, section 5).
        ...(request.detectMachine
          ? {
              machineDetection: 'true' as const,
              machineDetectionUrl: url(PLIVO_MACHINE_PATH, request.context),
            }
          : {}),
      });
      return { callSid: placed.requestUuid };
    },

    async status(callSid: string): Promise<CarrierCallState> {
      const call = (await opts.rest.status(callSid)) ?? (await opts.rest.queuedStatus(callSid));
      return call ?? { callSid, status: 'unknown', carrierStatus: 'unknown' };
    },

    // Neither a call nor a request by this id: it has ended, which is what was asked.
    async hangup(callSid: string): Promise<void> {
      if (await opts.rest.hangup(callSid)) return;
      await opts.rest.cancelRequest(callSid);
    },
  };
}
