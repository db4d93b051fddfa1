// What outbound calling needs from the phone side. Each carrier implements the one originator port,
// `CallPlacer` (placing a call, reading its status, hanging it up) and imports it from here;
// originator.ts composes the placers of the enabled carriers into the `Originator` the dialer and the
// single-call route use. outbound/ never imports a carrier.
import type { OutboundAmd } from '../call/outbound/outbound-context.js';
import type { RecordingSettings } from '../config/recording.js';
import type { AnsweredBy, AttemptOutcome } from '../store/campaign-records.js';

/**
 * Answering-machine detection for one call (docs/protocols/answering-machine-detection.md), its
 * message's placeholders already filled from the contact's variables.
 */
export type AmdRequest = OutboundAmd;

/** One call to place, whether a campaign's attempt or a single call on request. */
export interface OutboundCall {
  to: string;
  /** E.164 caller ID; null: the carrier's default number. */
  from: string | null;
  /** null: the default carrier. */
  carrier: string | null;
  profile: string;
  variables: Record<string, string>;
  amd: OutboundAmd | null;
  /** Recording asked for by the call or its campaign; null: as the profile says. */
  recording: RecordingSettings | null;
  /** The campaign attempt, campaign and contact it dials; null for a single call. */
  attemptId: string | null;
  campaignId: string | null;
  contact: number | null;
}

/**
 * What a carrier is handed of an `OutboundCall`: its numbers, the reference to the context kept
 * server-side (src/call/outbound/outbound-context.ts), carried through the call, and whether to ask for
 * answering-machine detection (with the end of a voicemail greeting).
 */
export type CarrierDial = Pick<OutboundCall, 'to' | 'from'> & { context: string; detectMachine: boolean };

/** A placed call's status in the words Twilio made common, so the dialer reads every carrier alike. */
export type PlacedCallStatus =
  | 'queued'
  | 'ringing'
  | 'in-progress'
  | 'completed'
  | 'busy'
  | 'no-answer'
  | 'failed'
  | 'canceled'
  | 'unknown';

export interface PlacedCallState {
  callSid: string;
  status: PlacedCallStatus;
  /** The carrier's own word for it, for logs (bounded, letters and separators only). */
  carrierStatus: string;
}

/** The originator port: what a carrier offers for placing outbound calls. */
export interface CallPlacer {
  readonly carrier: string;
  /** Whether the carrier can tell a person from an answering machine (`detectMachine` is honoured). */
  readonly detectsMachines: boolean;
  /** Asks the carrier to place the call; resolves with its call id once it accepted. */
  place(request: CarrierDial): Promise<{ callSid: string }>;
  status(callSid: string): Promise<PlacedCallState>;
  /** Ends the call whatever its state; an already-ended call is not an error. */
  hangup(callSid: string): Promise<void>;
  /**
   * The context reference of a call placed here lately, for a carrier whose webhooks may not carry it
   * back (Exotel's applet request); null when this instance did not place the call or forgot it.
   */
  contextOf?(callSid: string): string | null;
}

export interface OriginateRequest {
  to: string;
  /** A caller ID from the campaign's pool; null: the carrier's default number. */
  from: string | null;
  /** null: the server's default carrier. */
  carrier: string | null;
  profile: string;
  /** The contact's variables, for `renderTemplate` on the profile's prompt and greeting. */
  variables: Readonly<Record<string, string>>;
  /**
   * The attempt id. The originator carries it through the call (stream token, callback URL) so
   * every webhook of the call can name its attempt, even one that arrives before `originate` returns.
   */
  context: string;
  campaignId: string;
  amd: AmdRequest | null;
  /** The campaign's recording settings; absent: the profile's. */
  recording?: RecordingSettings | null;
}

/** What the carrier says of a call it placed. */
export type CarrierCallStatus =
  /** Queued, ringing or in progress. */
  | { state: 'live' }
  | { state: 'ended'; outcome: AttemptOutcome; durationMs?: number; answeredBy?: AnsweredBy }
  /** The carrier has no such call. */
  | { state: 'unknown' };

/**
 * Places outbound calls on whichever carrier a request names (originator.ts composes it from the
 * carriers' placers; tests stand in for it). Errors should carry `retryable` (true: the same request may succeed later)
 * and `status` (the carrier's HTTP status when it answered at all): see carrier-errors.ts for how the
 * dialer reads them.
 */
export interface Originator {
  /** Asks the carrier to place the call; resolves with the carrier's call id once it accepted. */
  originate(request: OriginateRequest): Promise<{ callSid: string }>;
  status(callSid: string, carrier: string | null): Promise<CarrierCallStatus>;
  /** Ends the call whatever its state; an already-ended call is not an error. */
  hangup(callSid: string, carrier: string | null): Promise<void>;
}
