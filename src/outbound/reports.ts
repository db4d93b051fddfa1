// How an outbound call's end reaches its campaign attempt, and its record. Two sources report it:
// the call's record, when the call was answered and bridged (its end reason says whether a
// voicemail was left), and the carrier's final status callback, which alone knows a call that was
// never answered (busy, no answer, failed, canceled). The dialer takes the first report of an
// attempt; a `completed` status waits a moment, so the record, which says more, comes first.
import type { Logger } from 'pino';
import type { OutboundStatusReport } from '../call/carrier-port.js';
import { CARRIER_FINAL_REASONS } from '../call/record/end-reason.js';
import type { CallRecord } from '../store/call-record.js';
import type { AttemptOutcome } from '../store/campaign-records.js';
import type { AttemptDetails } from '../store/campaign-store.js';
import type { Dialer } from './dialer.js';

/** How long a `completed` status waits for the call's record before it finishes the attempt itself. */
export const COMPLETED_STATUS_GRACE_MS = 15_000;

const STATUS_OUTCOMES: Readonly<Record<OutboundStatusReport['status'], AttemptOutcome>> = Object.freeze({
  completed: 'completed',
  busy: 'busy',
  no_answer: 'no_answer',
  failed: 'failed',
  canceled: 'cancelled',
});

/** The attempt's outcome from the record of its call. */
export function recordOutcome(record: CallRecord): AttemptOutcome {
  if (record.endReason === 'voicemail_left') return 'voicemail_left';
  if (record.endReason === 'machine') return 'machine';
  return record.outcome === 'failed' ? 'failed' : 'completed';
}

export interface OutboundReportsDeps {
  dialer: () => Dialer | null;
  /** Saves a record for an outbound call that never reached a conversation. */
  saveRecord(record: CallRecord): void;
  /** Whether the call is live on this instance (its record will come). */
  isLive(callSid: string): boolean;
  logger: Logger;
  now?: () => number;
  graceMs?: number;
}

export class OutboundReports {
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Attempt id → its call's identification in progress: a status report about the call waits for it. */
  readonly #identifying = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: OutboundReportsDeps) {}

  /** A call record was saved: an outbound call of a campaign finishes its attempt. */
  callRecorded(record: CallRecord): void {
    // A record made here from the carrier's final status: its attempt is finished from that status.
    if (record.carrierStatus !== undefined) return;
    const attemptId = record.outbound?.attempt;
    if (!attemptId) return;
    const outcome = recordOutcome(record);
    this.#finish(attemptId, outcome, {
      durationMs: record.durationMs,
      answeredBy: record.outbound?.answeredBy ?? null,
      reason:
        outcome === 'failed'
          ? `the call ended: ${record.endReason}`
          : (record.outbound?.voicemail?.problem ?? null),
    });
  }

  /** A callback named an outbound call by the carrier's own id: its attempt follows the call by it. */
  callIdentified(attemptId: string, carrier: string, callSid: string): void {
    const dialer = this.deps.dialer();
    if (!dialer) return;
    const done = dialer.callIdentified(attemptId, callSid).then(
      (changed) => {
        if (changed) this.deps.logger.debug({ attemptId, carrier, callSid }, 'attempt follows its call id');
      },
      (err: Error) =>
        this.deps.logger.error({ attemptId, err: err.message }, 'could not record an attempt call id'),
    );
    this.#identifying.set(attemptId, done);
    void done.finally(() => {
      if (this.#identifying.get(attemptId) === done) this.#identifying.delete(attemptId);
    });
  }

  /** The carrier's final status of an outbound call. */
  carrierStatus(report: OutboundStatusReport): void {
    if (report.status === 'completed') {
      // Answered: the call's record says how it went. Only a call that never reached a session
      // (its stream refused or lost) is finished from here, once the record had its chance.
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        if (this.deps.isLive(report.callSid)) return;
        this.#finishReported(report, 'completed', {
          durationMs: report.durationMs,
          reason: 'completed at the carrier with no call record here',
        });
      }, this.deps.graceMs ?? COMPLETED_STATUS_GRACE_MS);
      timer.unref();
      this.#timers.add(timer);
      return;
    }
    const reason = `carrier status ${report.status}${report.reason ? ` (${report.reason})` : ''}`;
    this.deps.saveRecord(unansweredRecord(report, reason, this.deps.now?.() ?? Date.now()));
    this.#finishReported(report, STATUS_OUTCOMES[report.status], { durationMs: 0, reason });
  }

  close(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  /**
   * A carrier's report finishes an attempt only as the report about that attempt's own recorded
   * call id (docs/security.md): the attempt is found by the call the report names, never by the
   * context alone, so a context replayed with another call id touches nothing.
   */
  #finishReported(report: OutboundStatusReport, outcome: AttemptOutcome, details: AttemptDetails): void {
    const { attemptId } = report.context;
    if (!attemptId) return;
    const dialer = this.deps.dialer();
    if (!dialer) return;
    const finish = async () => {
      await this.#identifying.get(attemptId);
      return dialer.attemptReported(attemptId, report.callSid, outcome, details);
    };
    finish().then(
      (result) => {
        if (result === 'recorded') this.deps.logger.debug({ attemptId, outcome }, 'attempt finished');
        else this.deps.logger.debug({ attemptId, outcome }, 'no open attempt has this call id');
      },
      (err: Error) =>
        this.deps.logger.error({ attemptId, err: err.message }, 'could not record an attempt outcome'),
    );
  }

  #finish(attemptId: string, outcome: AttemptOutcome, details: AttemptDetails): void {
    const dialer = this.deps.dialer();
    if (!dialer) return;
    dialer.attemptFinished({ attemptId }, outcome, details).then(
      (result) => {
        if (result === 'recorded') this.deps.logger.debug({ attemptId, outcome }, 'attempt finished');
      },
      (err: Error) =>
        this.deps.logger.error({ attemptId, err: err.message }, 'could not record an attempt outcome'),
    );
  }
}

/** The record of an outbound call that ended at the carrier without being answered. */
export function unansweredRecord(report: OutboundStatusReport, reason: string, nowMs: number): CallRecord {
  const at = new Date(nowMs).toISOString();
  return {
    callSid: report.callSid,
    streamSid: '',
    carrier: report.carrier,
    direction: 'outbound',
    from: report.from,
    to: report.to,
    profile: report.context.profile,
    startedAt: at,
    endedAt: at,
    durationMs: 0,
    endReason: CARRIER_FINAL_REASONS[report.status],
    outcome: 'failed',
    bargeIns: 0,
    turns: [],
    functionCalls: [],
    latency: { firstAudioMs: null, agentConnectMs: null, agentReportedMs: [], perceivedMs: [] },
    prewarmed: false,
    outbound: {
      campaign: report.context.campaignId,
      contact: report.context.contact,
      attempt: report.context.attemptId,
      answeredBy: null,
      amdVerdict: null,
    },
    carrierStatus: { status: report.status, reason },
  };
}
