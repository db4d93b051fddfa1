// What outbound calling needs from the phone side. A carrier's REST client implements it (placing
// the call, reading its status, hanging it up); app.ts plugs it in. outbound/ never imports a carrier.
import type { RecordingSettings } from '../config/recording.js';
import type { AnsweredBy, AttemptOutcome } from '../store/campaign-records.js';

/** Answering-machine detection for one call (docs/protocols/answering-machine-detection.md). */
export interface AmdRequest {
  /** `voicemail`: leave the message after the beep; `hangup`: end the call on a machine. */
  mode: 'voicemail' | 'hangup';
  /** The message, its placeholders already filled from the contact's variables. */
  voicemailText: string | null;
  voicemailAudioUrl: string | null;
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
 * Places outbound calls. Errors should carry `retryable` (true: the same request may succeed later)
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
