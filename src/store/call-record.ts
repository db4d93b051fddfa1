// What is kept of a call once it ends: written to the store, served by the admin API. The record's
// shape is the wire contract's (src/api/calls.ts); the store keeps it as the API shows it.
export type {
  AgentTurnLatency,
  CallRecord,
  CallRecordingRecord,
  FunctionCallRecord,
  OutboundRecord,
  TurnRecord,
  VoicemailRecord,
} from '../api/calls.js';
import type { CallRecord } from '../api/calls.js';

export interface CallRecordQuery {
  /** ISO 8601 bounds on `startedAt`, inclusive `since`, exclusive `until`. */
  since?: string;
  until?: string;
  outcome?: 'completed' | 'failed';
  endReason?: string;
  direction?: 'inbound' | 'outbound';
  carrier?: string;
  profile?: string;
  /** The campaign id of an outbound call a campaign placed. */
  campaign?: string;
  /** E.164: matches calls from or to it. */
  number?: string;
  limit: number;
  /** Opaque cursor from the previous page. */
  cursor?: string;
}

export interface CallRecordPage {
  calls: CallRecord[];
  nextCursor: string | null;
}
