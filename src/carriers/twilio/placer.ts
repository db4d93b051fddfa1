// Placing outbound calls through Twilio's Calls API (docs/protocols/twilio.md, "REST";
// docs/protocols/answering-machine-detection.md): the call's `Url` is our voice webhook, so an
// answered call is bridged exactly as an inbound one; status callbacks and the asynchronous
// detection verdict come to our routes. The outbound context's reference rides in each of those URLs'
// query (Twilio signs the URL as given, query included), so every webhook of the call names its
// attempt, even one that comes before the create request has returned.
import { CarrierApiError } from '../../errors.js';
import type { CarrierCallState, CarrierCallStatus } from '../call-status.js';
import { boundedStatusWord } from '../call-status.js';
import type { CallPlacer, CarrierDial } from '../../outbound/ports.js';
import { callerIdFor } from '../placer.js';
import type { TwilioRest } from './rest.js';

/** Seconds Twilio lets the phone ring before the call ends as `no-answer`. */
const RING_TIMEOUT_S = 30;
/** Twilio's detection gives up after this many seconds and reports `unknown` (treated as a person). */
const MACHINE_DETECTION_TIMEOUT_S = 30;

export const TWILIO_CONTEXT_PARAM = 'ctx';

const STATUSES: Readonly<Record<string, CarrierCallStatus>> = Object.freeze({
  queued: 'queued',
  initiated: 'queued',
  ringing: 'ringing',
  'in-progress': 'in-progress',
  answered: 'in-progress',
  completed: 'completed',
  busy: 'busy',
  'no-answer': 'no-answer',
  failed: 'failed',
  canceled: 'canceled',
});

/** Twilio's status word in the common vocabulary. */
export function twilioCallStatus(word: string): CarrierCallStatus {
  return STATUSES[word] ?? 'unknown';
}

export interface TwilioPlacerOptions {
  rest: TwilioRest;
  /** Base URL Twilio reaches this server at (PUBLIC_URL), read at each call. */
  publicUrl: () => string;
  /** Caller ID when a request names none: one of the numbers this server answers. */
  defaultFrom: string | null;
}

export function createTwilioPlacer(opts: TwilioPlacerOptions): CallPlacer {
  const url = (path: string, context: string) =>
    `${opts.publicUrl().replace(/\/+$/, '')}/carriers/twilio/${path}?${TWILIO_CONTEXT_PARAM}=${encodeURIComponent(context)}`;

  return {
    carrier: 'twilio',
    detectsMachines: true,

    async place(request: CarrierDial) {
      const from = callerIdFor('twilio', 'Twilio', request, opts.defaultFrom);
      const fields: Record<string, string | string[]> = {
        To: request.to,
        From: from,
        Url: url('voice', request.context),
        Method: 'POST',
        StatusCallback: url('status', request.context),
        StatusCallbackMethod: 'POST',
        StatusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        Timeout: String(RING_TIMEOUT_S),
      };
      if (request.detectMachine) {
        // Asynchronous, so the call is bridged at once; the verdict comes after the greeting's end.
        fields.MachineDetection = 'DetectMessageEnd';
        fields.AsyncAmd = 'true';
        fields.AsyncAmdStatusCallback = url('amd', request.context);
        fields.AsyncAmdStatusCallbackMethod = 'POST';
        fields.MachineDetectionTimeout = String(MACHINE_DETECTION_TIMEOUT_S);
      }
      const call = await opts.rest.createCall(fields);
      return { callSid: call.sid };
    },

    async status(callSid: string): Promise<CarrierCallState> {
      const call = await opts.rest.getCall(callSid);
      if (call === null) return { callSid, status: 'unknown', carrierStatus: 'unknown' };
      const word = boundedStatusWord(call.status);
      return { callSid, status: twilioCallStatus(word), carrierStatus: word };
    },

    async hangup(callSid: string) {
      try {
        await opts.rest.hangup(callSid);
      } catch (err) {
        // Twilio answers 404 for a call it no longer knows: it has ended, which was the point.
        if (err instanceof CarrierApiError && err.status === 404) return;
        throw err;
      }
    },
  };
}
