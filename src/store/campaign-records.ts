import type { RecordingSettings } from '../config/recording.js';
// The durable shapes of outbound calling: campaigns, their contacts and the attempts to reach them.
// The store keeps these (src/store/campaign-store.ts); the dialer and the admin API read and change
// them only through the store's atomic steps.

export {
  ATTEMPT_OUTCOMES,
  type AttemptOutcome,
  CAMPAIGN_STATES,
  type CallingWindow,
  type CampaignState,
  CONTACT_STATES,
  type ContactState,
  FINAL_OUTCOMES,
  type FinalOutcome,
  RETRY_ON,
  type RetryOn,
  WEEKDAYS,
  type Weekday,
} from '../api/campaigns.js';
import type {
  AttemptOutcome,
  CampaignSettings,
  CampaignState,
  ContactState,
  FinalOutcome,
} from '../api/campaigns.js';

/** Who answered, as answering-machine detection judged it. */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

/** What a campaign does, validated, with every default filled in (the settings as the API shows them). */
export interface CampaignSpec extends CampaignSettings {
  /** Its calls are recorded (docs/recordings.md); absent: as the profile says. */
  recording?: RecordingSettings;
  name: string;
  profile: string;
  /** null: the server's default carrier. */
  carrier: string | null;
  /** Caller IDs, E.164; empty: the carrier's default. */
  from: string[];
}

export interface PauseReason {
  by: 'operator' | 'breaker';
  message: string;
  atMs: number;
}

export interface CampaignRecord {
  id: string;
  spec: CampaignSpec;
  state: CampaignState;
  createdAtMs: number;
  startedAtMs: number | null;
  endedAtMs: number | null;
  /** Why a paused campaign is paused; null otherwise. */
  pause: PauseReason | null;
  /** Only results from this instant on count towards the breaker (set by start and resume). */
  breakerSinceMs: number;
}

/** A contact as added: validated, normalised, not yet stored. */
export interface NewContact {
  /** The row of its upload (the header is row 1 in a CSV, the first element row 1 in JSON). */
  row: number;
  /** E.164; for an `invalid` contact, the text as given. */
  phone: string;
  /** ISO 3166 alpha-2 of the number, when known. */
  country: string | null;
  timezone: string;
  variables: Record<string, string>;
  /** Set for a contact stored only to report it: `invalid`, with the reason. */
  invalid: string | null;
}

export interface AttemptSummary {
  id: string;
  /** 1 for the first attempt. */
  number: number;
  from: string | null;
  callSid: string | null;
  startedAtMs: number;
  endedAtMs: number | null;
  outcome: AttemptOutcome | null;
  durationMs: number | null;
  answeredBy: AnsweredBy | null;
  summary: string | null;
  /** Why it ended so, when there is more to say than the outcome (a carrier error, a lost dispatch). */
  reason: string | null;
}

export interface ContactRecord extends NewContact {
  campaignId: string;
  /** Position in the campaign, from 1; contacts list in this order. */
  seq: number;
  state: ContactState;
  /** When the contact may be dialed next (pending and retry). */
  dueAtMs: number;
  /** Attempts that count against the budget, oldest first; the open one last. */
  attempts: AttemptSummary[];
  /** Dispatches begun, refunded ones included: makes every attempt id unique. */
  dials: number;
  /** Carrier API refusals that were retried without burning an attempt. */
  carrierErrors: number;
  outcome: FinalOutcome | null;
  /** Why the outcome is what it is, when the outcome alone does not say. */
  note: string | null;
}

/** An attempt in flight: claimed, maybe dispatched, not yet finished. */
export interface OpenAttempt {
  id: string;
  campaignId: string;
  contactId: number;
  /** The dialer process that claimed it (`<instance>/<boot id>`); another adopts it if that one dies. */
  owner: string;
  to: string;
  from: string | null;
  /** The carrier's id, recorded the moment the carrier returns it; null until then. */
  callSid: string | null;
  claimedAtMs: number;
}

/** Attempt ids name their campaign and contact, so a callback carrying one finds its way. */
export function attemptId(campaignId: string, contactSeq: number, dial: number): string {
  return `${campaignId}.${contactSeq}.${dial}`;
}

export function parseAttemptId(id: string): { campaignId: string; contactSeq: number } | null {
  const match = /^(cmp_[a-z0-9]{1,40})\.([1-9]\d{0,8})\.([1-9]\d{0,4})$/.exec(id);
  if (!match) return null;
  return { campaignId: match[1]!, contactSeq: Number(match[2]) };
}
