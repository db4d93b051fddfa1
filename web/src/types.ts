// The admin API's shapes as the console reads them. Records and campaign vocabularies come from the
// server's own modules (type-only or constant imports), so a renamed field fails the type-check here.
import type { CallRecord, TurnRecord } from '../../src/store/call-record.js';
import type { CampaignState, ContactState, FinalOutcome } from '../../src/store/campaign-records.js';

export type { CallRecord, TurnRecord, CampaignState, ContactState, FinalOutcome };

export type Role = 'viewer' | 'operator' | 'admin';

export interface Session {
  name: string;
  role: Role;
  csrf: string;
}

export interface LiveCall {
  callSid: string;
  carrier: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  startedAt: string;
  campaign: string | null;
  instance: string;
  region: string;
}

/** What the call log may add beside turns: DTMF digits, barge-ins and the like, in call time. */
export interface CallEvent {
  type: string;
  atMs: number;
  [field: string]: unknown;
}

export interface RecordingInfo {
  state: string;
  durationMs: number;
  bytes: number;
  pauses: { atMs: number; durationMs: number }[];
}

/** A call's page: the stored record, and what the recording and event log add to it. */
export type CallDetail = CallRecord & {
  campaignId?: string;
  events?: CallEvent[];
  recording?: RecordingInfo;
};

export interface CallPage {
  calls: CallRecord[];
  nextCursor: string | null;
}

export interface CampaignProgress {
  contacts: Record<ContactState, number> & { total: number };
  outcomes: Record<FinalOutcome, number>;
  inFlight: number;
  pace: { set: number; achieved: number };
  etaSeconds: number | null;
}

export interface Campaign {
  id: string;
  name: string;
  state: CampaignState;
  profile: string;
  carrier: string;
  from: string[];
  pacing: { callsPerSecond: number; maxConcurrent: number };
  createdAt: string | null;
  startedAt: string | null;
  endedAt: string | null;
  pause: { by: string; reason: string; at: string | null } | null;
  progress: CampaignProgress;
}

/** One `progress` event of a campaign's stream: the campaign, and dials per second over 10 s. */
export type CampaignProgressEvent = Campaign & { dialRate: number };

export interface ContactsUpload {
  added: number;
  rejected: { row: number; reason: string }[];
}

export interface DncUpload extends ContactsUpload {
  alreadyListed: number;
}

export interface DncEntry {
  number: string;
  addedAt: string;
}

export interface ApiKey {
  id: string;
  name: string;
  role: Role;
  createdAt: string;
}

export interface AuditEntry {
  id: string;
  at: string;
  keyName: string;
  role: Role;
  action: string;
  target: string;
  detail?: unknown;
}
