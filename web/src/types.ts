// The admin API's shapes as the console reads them: all of them the wire contract's (src/api), the
// schemas /openapi.json is generated from, so a renamed field fails the type-check here.
import type { CallRecord } from '../../src/api/index.js';

export type {
  ApiKey,
  AuditEntry,
  CallRecord,
  Campaign,
  CampaignProgress,
  CampaignProgressEvent,
  CampaignState,
  ContactsAdded,
  ContactState,
  CreatedKey,
  DncAdded,
  DncListed,
  FinalOutcome,
  LiveCall,
  Role,
  Session,
  TurnRecord,
} from '../../src/api/index.js';

/**
 * Something that happened in a call beside its turns (a DTMF digit, a barge-in), in call time. No
 * record the API serves holds any today; the timeline shows them when a record is given some.
 */
export interface CallEvent {
  type: string;
  atMs: number;
  [field: string]: unknown;
}

/** A call's page: the stored record, and events beside it when there are any. */
export type CallDetail = CallRecord & { events?: CallEvent[] };
