// The state port: one contract, an embedded SQLite adapter (default, durable in DATA_DIR) and a
// Redis adapter (REDIS_URL) so several instances share it. Both pass test/store/contract.ts.
//
// The contract is grouped by concern, one interface each; `Store` is their union. A new concern
// (call records, say) adds an interface here and one module per adapter under sqlite/ and redis/.
import type { CallRecord, CallRecordPage, CallRecordQuery } from './call-record.js';
import type { AccessStore } from './access.js';
import type { OutboundStore } from './campaign-store.js';

/** Milliseconds since the epoch; injectable so tests can move time. */
export type Clock = () => number;

/** Single-use claims. */
export interface OnceClaims {
  /**
   * Claims `key` for what is valid for `validForMs`. True for the first claim; false while an
   * earlier claim stands. A claim stands for `validForMs` plus the store's clock-skew allowance
   * (limits.ts, CLOCK_SKEW_ALLOWANCE_MS), so a stream token stamped by one instance's clock cannot be
   * claimed twice on another whose clock lags. Used for single-use stream tokens.
   */
  claimOnce(key: string, validForMs: number): Promise<boolean>;
}

/**
 * Outbound calls' contexts, kept server-side behind an opaque id while the call may still report
 * (docs/security.md, "Outbound contexts"): only the id travels through the carrier.
 */
export interface OutboundContextRecords {
  /** Keeps `value` under `id` for `ttlMs`; an id is written once, by the instance placing the call. */
  putOutboundContext(id: string, value: string, ttlMs: number): Promise<void>;
  /** The value kept under `id`, or null when none was or it has expired. */
  getOutboundContext(id: string): Promise<string | null>;
}

/** Result of claiming an idempotency key. `token` proves ownership to commit or release. */
export type IdempotencyClaim =
  { status: 'claimed'; token: string } | { status: 'in_progress' } | { status: 'done' };

/** Idempotency keys of webhook deliveries (docs/protocols/webhook-providers.md section 5). */
export interface IdempotencyKeys {
  /**
   * Atomically claims `key` as in progress for `ttlMs`, unless it is already in progress or done.
   * An in-progress claim that is neither committed nor released lapses after `ttlMs`, so a crashed
   * instance never blocks a key for good.
   */
  claimIdempotencyKey(key: string, ttlMs: number): Promise<IdempotencyClaim>;
  /** Marks the key done for `ttlMs` (the dedupe window). No-op if another claimant owns it now. */
  commitIdempotencyKey(key: string, token: string, ttlMs: number): Promise<void>;
  /** Drops an in-progress claim so a retried delivery is processed. No-op on a done key or another's claim. */
  releaseIdempotencyKey(key: string, token: string): Promise<void>;
}

export interface WindowCount {
  count: number;
  /** When the window ends and the count starts again from zero. */
  resetAtMs: number;
}

/** Counters over a window that opens at the first hit (the auth-failure limiter, docs/protocols/webhook-providers.md section 7). */
export interface WindowCounters {
  /** Adds one to `key`; a key with no open window opens one of `windowMs`. */
  incrementWindowCounter(key: string, windowMs: number): Promise<WindowCount>;
  /** The open window's count, or null when none is open. */
  readWindowCounter(key: string): Promise<WindowCount | null>;
}

/** What a producer puts on the queue. `payload` must survive JSON. */
export interface QueueEventInput {
  /** Forwarded name, `<provider>/<event>`. */
  name: string;
  provider: string;
  idempotencyKey: string;
  payload: unknown;
}

export interface QueuedEvent extends QueueEventInput {
  /** Stable across retries; the handle the admin API uses. */
  id: string;
  /** Delivery attempts started, this one included once claimed. */
  attempts: number;
  enqueuedAtMs: number;
  lastError: string | null;
}

/** A claimed event; `receipt` is the adapter's handle for ack, retry or dead-letter. */
export interface ClaimedEvent extends QueuedEvent {
  receipt: string;
}

export interface DeadLetter extends QueuedEvent {
  deadAtMs: number;
}

export interface QueueStats {
  /** Events waiting, delayed for a retry or in flight; dead letters excluded. */
  depth: number;
  /** Age of the oldest of those, null when there is none. */
  oldestAgeMs: number | null;
  deadLetters: number;
}

/**
 * The shared queue (docs/protocols/webhook-providers.md section 6). Each event goes to one consumer at a time; an event
 * claimed by a consumer that neither acks, retries nor dead-letters it within `leaseMs` (a crashed
 * instance) is handed to another consumer.
 */
export interface EventQueue {
  /** Throws QueueFullError while the queue holds its limit of events (limits.ts). */
  enqueueEvent(event: QueueEventInput): Promise<string>;
  /** The next due event for `consumer`, or null. Never blocks. */
  claimNextEvent(consumer: string, leaseMs: number): Promise<ClaimedEvent | null>;
  ackEvent(event: ClaimedEvent): Promise<void>;
  /** Puts the event back, due again in `delayMs`. */
  retryEventLater(event: ClaimedEvent, delayMs: number, error: string): Promise<void>;
  deadLetterEvent(event: ClaimedEvent, error: string): Promise<void>;
  /**
   * Newest first, at most `limit`. Dead letters are kept for the store's retention and up to its
   * limit of letters (limits.ts); older ones are gone.
   */
  listDeadLetters(limit: number): Promise<DeadLetter[]>;
  /**
   * Requeues a dead letter as new (attempts 0, due now). False when `id` is not a dead letter;
   * throws QueueFullError while the queue is full.
   */
  retryDeadLetter(id: string): Promise<boolean>;
  queueStats(): Promise<QueueStats>;
}

/** When each webhook provider last delivered a verified request (docs/protocols/webhook-providers.md section 1). */
export interface ProviderVerifications {
  markProviderVerified(provider: string, atMs: number): Promise<void>;
  /** Provider name → last verified time in ms; providers never verified are absent. */
  providerVerifiedTimes(): Promise<Record<string, number>>;
}

/**
 * What is kept of each ended call, for the admin API. A record is kept for the adapter's retention
 * period counted from its `startedAt` (90 days unless configured); older ones are gone, and saving
 * one that old stores nothing.
 */
export interface CallRecords {
  /** Saves `record`; saving the same callSid again replaces it. */
  saveCallRecord(record: CallRecord): Promise<void>;
  getCallRecord(callSid: string): Promise<CallRecord | null>;
  /**
   * Newest first by `startedAt`, then by callSid (descending). `nextCursor` resumes after the last
   * position handed out, so calls saved meanwhile neither shift nor repeat later pages; it is null on
   * the last page. A page may hold fewer than `limit` calls yet have a cursor: follow it until null.
   * Throws BadRequestError for a cursor it did not issue or a bound that is not a date.
   */
  listCallRecords(query: CallRecordQuery): Promise<CallRecordPage>;
}

/** What an analysis job needs: the call it belongs to and the text to send. `text` must survive JSON. */
export interface AnalysisJobInput {
  callSid: string;
  /** The `language` query parameter the text goes with. */
  language: string;
  text: string;
  /** The transcript was cut to fit the analysis bound. */
  truncated: boolean;
}

export interface AnalysisJob extends AnalysisJobInput {
  /** Attempts started, this one included once claimed. */
  attempts: number;
  enqueuedAtMs: number;
  lastError: string | null;
}

/** A claimed job; `receipt` proves the claim to retry it later. */
export interface ClaimedAnalysisJob extends AnalysisJob {
  receipt: string;
}

export type AnalysisEnqueueResult = 'queued' | 'duplicate' | 'full';

/**
 * Post-call analysis work, durable across restarts and shared by instances. One job per call: a
 * second enqueue for the same callSid changes nothing. A job claimed by a consumer that neither
 * completes nor retries it within `leaseMs` (a crashed instance) is handed out again.
 */
export interface AnalysisJobs {
  /** Adds the job unless one for the call exists (`duplicate`) or `maxQueued` jobs exist (`full`). */
  enqueueAnalysisJob(job: AnalysisJobInput, maxQueued: number): Promise<AnalysisEnqueueResult>;
  /** The next due job for `consumer`, oldest due first, or null. Never blocks. */
  claimAnalysisJob(consumer: string, leaseMs: number): Promise<ClaimedAnalysisJob | null>;
  /** Removes the job: it has its outcome. */
  completeAnalysisJob(job: ClaimedAnalysisJob): Promise<void>;
  /** Puts the job back, due again in `delayMs`. No-op once the claim has lapsed to another consumer. */
  retryAnalysisJobLater(job: ClaimedAnalysisJob, delayMs: number, error: string): Promise<void>;
  /** Jobs waiting, delayed or in progress. */
  analysisJobCount(): Promise<number>;
}

export interface Store
  extends
    OnceClaims,
    OutboundContextRecords,
    IdempotencyKeys,
    WindowCounters,
    EventQueue,
    ProviderVerifications,
    CallRecords,
    AnalysisJobs,
    OutboundStore,
    AccessStore {
  close(): Promise<void>;
}
