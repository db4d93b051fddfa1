// The store's ports for outbound calling, one interface per concern: campaigns, their contacts, the
// attempts in flight, the breaker's window of results, the dialers' heartbeats and the do-not-call
// list. Every step that must happen once across instances (leasing a contact, beginning an attempt
// under the cap and the pace, finishing it) is one atomic step of the adapter: a transaction in
// SQLite, a Lua script in Redis. Both adapters pass test/store/campaign-contract.ts.
import type {
  AnsweredBy,
  AttemptOutcome,
  CampaignRecord,
  CampaignState,
  ContactRecord,
  ContactState,
  FinalOutcome,
  NewContact,
  OpenAttempt,
  PauseReason,
} from './campaign-records.js';

/** A campaign's contacts are bounded, so no campaign outgrows one Redis hash slot. */
export const MAX_CONTACTS_PER_CAMPAIGN = 100_000;
/** Campaigns, their contacts and results are kept this long after they end. */
export const CAMPAIGN_RETENTION_MS = 90 * 24 * 60 * 60_000;
/** Attempt starts are kept this long: enough for "pace achieved" over the last minutes. */
export const STARTS_KEPT_MS = 10 * 60_000;

export interface CampaignPage {
  campaigns: CampaignRecord[];
  nextCursor: string | null;
}

export interface CampaignPatch {
  startedAtMs?: number;
  endedAtMs?: number;
  pause?: PauseReason | null;
  breakerSinceMs?: number;
}

export interface Campaigns {
  createCampaign(record: CampaignRecord): Promise<void>;
  getCampaign(id: string): Promise<CampaignRecord | null>;
  /**
   * Newest first. `nextCursor` resumes after the last campaign handed out; null on the last page.
   * Throws BadRequestError for a cursor it did not issue.
   */
  listCampaigns(query: { limit: number; cursor?: string }): Promise<CampaignPage>;
  /**
   * Moves the campaign to `to` and applies `patch`, if it is in one of `from`: one winner among
   * concurrent callers. The updated record, or null when it was not in `from` or does not exist.
   */
  transitionCampaign(
    id: string,
    from: readonly CampaignState[],
    to: CampaignState,
    patch: CampaignPatch,
  ): Promise<CampaignRecord | null>;
  /**
   * Campaigns a dialer may have work in: running or paused ones, and ended ones whose attempts are
   * still open. May hold a few more (an adapter's hint that `settleCampaign` clears).
   */
  activeCampaignIds(): Promise<string[]>;
  /** Drops an ended campaign with no open attempt from `activeCampaignIds`. */
  settleCampaign(id: string): Promise<void>;
}

export type AddContactsResult =
  | {
      ok: true;
      added: number;
      /** Indexes into the input of numbers the campaign already had. */
      duplicates: number[];
      /** Indexes into the input left out because the campaign filled up (or ended meanwhile). */
      refused: number[];
      refusedReason: 'full' | 'ended' | null;
    }
  | { ok: false; reason: 'not_found' | 'ended' };

export interface ContactPage {
  contacts: ContactRecord[];
  nextCursor: string | null;
}

export interface ContactTally {
  states: Record<ContactState, number>;
  outcomes: Record<FinalOutcome, number>;
  /** Variable name → callable contacts with a value for it (placeholders are checked on it at start). */
  variables: Record<string, number>;
  /** Callable contacts: all but those stored as `invalid`. */
  callable: number;
}

export interface CampaignContacts {
  /**
   * Adds contacts, in order, to a draft, running or paused campaign. A number the campaign already
   * holds is skipped and its index returned in `duplicates`; once the campaign holds
   * MAX_CONTACTS_PER_CAMPAIGN, the rest are left out and returned in `refused`. Refused whole when
   * the campaign does not exist or has ended.
   */
  addContacts(campaignId: string, contacts: readonly NewContact[], nowMs: number): Promise<AddContactsResult>;
  getContact(campaignId: string, seq: number): Promise<ContactRecord | null>;
  /** In `seq` order; filtered by state when given. Throws BadRequestError for a foreign cursor. */
  listContacts(
    campaignId: string,
    query: { state?: ContactState; limit: number; cursor?: string },
  ): Promise<ContactPage>;
  contactTally(campaignId: string): Promise<ContactTally>;
  /**
   * Up to `limit` contacts waiting (pending or retry) and due at `nowMs`, earliest due first, that
   * no other lease holds; each is leased for `leaseMs`, so concurrent dialers never pick one twice.
   */
  leaseDueContacts(
    campaignId: string,
    opts: { nowMs: number; limit: number; leaseMs: number },
  ): Promise<ContactRecord[]>;
  /** Ends a lease; the contact is due again at `dueAtMs`. No-op unless it is waiting. */
  releaseContact(campaignId: string, seq: number, dueAtMs: number): Promise<void>;
  /** Gives a waiting contact its final outcome without a dial. False when it is not waiting. */
  closeContact(
    campaignId: string,
    seq: number,
    close: { outcome: 'dnc' | 'cancelled'; note: string | null; nowMs: number },
  ): Promise<boolean>;
  /** Closes up to `limit` waiting contacts as `cancelled`; returns how many it closed. */
  cancelWaitingContacts(campaignId: string, limit: number, nowMs: number): Promise<number>;
  /** True while any contact is waiting or dialing. */
  hasUnfinishedContacts(campaignId: string): Promise<boolean>;
  /** When the earliest waiting contact falls due (leased ones included); null when none waits. */
  nextDueAtMs(campaignId: string): Promise<number | null>;
}

export interface BeginAttempt {
  campaignId: string;
  seq: number;
  /** The dialer process claiming it. */
  owner: string;
  from: string | null;
  nowMs: number;
  /** The cap on open attempts across every instance. */
  maxConcurrent: number;
  /** The pace (pace.ts): dials 1000/cps ms apart, never more than the whole cps in any second. */
  callsPerSecond: number;
}

export type BeginResult =
  | { ok: true; attempt: OpenAttempt; contact: ContactRecord }
  | { ok: false; reason: 'cap' | 'not_running' | 'not_waiting' }
  | { ok: false; reason: 'pace'; waitMs: number };

export interface AttemptDetails {
  durationMs?: number | null;
  answeredBy?: AnsweredBy | null;
  summary?: string | null;
  reason?: string | null;
}

export interface FinishAttempt {
  campaignId: string;
  attemptId: string;
  nowMs: number;
  /**
   * `counted`: the attempt ends with `outcome` and counts against the budget. `refunded`: the
   * carrier refused to place it and may accept later, so it does not count and the contact waits.
   */
  result:
    | { kind: 'counted'; outcome: AttemptOutcome; details: AttemptDetails }
    | { kind: 'refunded'; reason: string };
  next:
    { state: 'waiting'; dueAtMs: number } | { state: 'done'; outcome: FinalOutcome; note?: string | null };
}

export interface DialAttempts {
  /**
   * Claims the next attempt of a waiting contact, durably, before the carrier is asked: only while
   * the campaign runs, under `maxConcurrent` open attempts and within the pace. Exactly one of any
   * number of concurrent callers for one contact succeeds.
   */
  beginAttempt(input: BeginAttempt): Promise<BeginResult>;
  /**
   * Records the id the carrier answered the request to place the call with, on an open attempt that
   * has none yet. False when the attempt is not open or already has one (its call was identified
   * first, by a callback that raced the carrier's answer).
   */
  recordCallSid(campaignId: string, attemptId: string, callSid: string): Promise<boolean>;
  /**
   * Replaces an open attempt's call id with the carrier's own id of the call, learned from its first
   * callback where the request to place it was answered with another (Plivo's request UUID). From
   * then on the attempt is found, read, hung up and reported by this id; the old one no longer finds
   * it. False when the attempt is not open.
   */
  identifyCall(campaignId: string, attemptId: string, callSid: string): Promise<boolean>;
  getOpenAttempt(campaignId: string, attemptId: string): Promise<OpenAttempt | null>;
  /** The open attempt a carrier call id belongs to. */
  findAttemptByCallSid(callSid: string): Promise<OpenAttempt | null>;
  /** Finishes an open attempt, once: the contact after it, or null when it was not open. */
  finishAttempt(input: FinishAttempt): Promise<ContactRecord | null>;
  /** Every open attempt of the campaign (at most its cap, plus any a lowered cap left over). */
  openAttempts(campaignId: string): Promise<OpenAttempt[]>;
  /** Hands an open attempt from `fromOwner` to `toOwner`; false when someone else got there first. */
  adoptAttempt(campaignId: string, attemptId: string, fromOwner: string, toOwner: string): Promise<boolean>;
  /** Attempts begun at or after `sinceMs` (the last ten minutes are kept). */
  attemptsBegunSince(campaignId: string, sinceMs: number): Promise<number>;
}

/** The circuit breaker's sliding window: each finished attempt, failed or not. */
export interface DialResults {
  /** Records a result; results older than `keepMs` before it are dropped. One id counts once. */
  recordDialResult(
    campaignId: string,
    result: { id: string; atMs: number; failed: boolean },
    keepMs: number,
  ): Promise<void>;
  dialResultCounts(campaignId: string, sinceMs: number): Promise<{ calls: number; failures: number }>;
}

/** Which dialer processes are alive, so the attempts of a dead one are adopted. */
export interface DialerHeartbeats {
  /** The dialer `owner` is alive until `nowMs + ttlMs` (the dialer's clock, so tests can move it). */
  beatDialer(owner: string, nowMs: number, ttlMs: number): Promise<void>;
  /** The subset of `owners` whose heartbeat has not lapsed at `nowMs`. */
  liveDialers(owners: readonly string[], nowMs: number): Promise<Set<string>>;
}

export interface DoNotCallEntry {
  number: string;
  addedAtMs: number;
}

/** The do-not-call list: E.164 numbers, checked right before every dial. */
export interface DoNotCallList {
  /** Adds numbers; returns how many were not listed yet. */
  addDoNotCall(numbers: readonly string[], nowMs: number): Promise<number>;
  getDoNotCall(number: string): Promise<DoNotCallEntry | null>;
  /** False when the number was not listed. */
  removeDoNotCall(number: string): Promise<boolean>;
  /**
   * Listed numbers in order, those containing `q` when given; `nextCursor` resumes after the last
   * number handed out (null on the last page). A page may hold fewer than `limit`: follow the cursor.
   */
  listDoNotCall(query: { q?: string; limit: number; cursor?: string }): Promise<DoNotCallPage>;
}

export interface DoNotCallPage {
  numbers: DoNotCallEntry[];
  nextCursor: string | null;
}

export interface OutboundStore
  extends Campaigns, CampaignContacts, DialAttempts, DialResults, DialerHeartbeats, DoNotCallList {}
