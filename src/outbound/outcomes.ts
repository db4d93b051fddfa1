// Outcomes coming back: an attempt ends once, whatever the number of reports (status callbacks,
// call records, reconciliation), with the next attempt after the campaign's delay or the contact's
// final outcome. Each result then enters the breaker's window, frees a slot and may complete the
// campaign. The campaign is read once per outcome, when it is settled (its state decides whether a
// retry is still wanted, so a record from before the call would not do), and handed along.
import type { AttemptDetails } from '../store/campaign-store.js';
import {
  type AttemptOutcome,
  type CampaignRecord,
  type OpenAttempt,
  parseAttemptId,
} from '../store/campaign-records.js';
import { recordResult } from './breaker.js';
import { completeIfDone } from './completion.js';
import type { DialerContext } from './dialer-context.js';
import { outcomeAtCancel } from './cancel-outcome.js';
import { isBreakerFailure, nextStep } from './retry-policy.js';

/** Where a callback says which attempt it is about. */
export type AttemptRef = { attemptId: string } | { callSid: string };

export type FinishResult = 'recorded' | 'not_open';

export interface SettleOptions {
  /** Closes the contact whatever the retry policy says. */
  final?: boolean;
  note?: string;
}

export class Outcomes {
  /** Attempt id → the identification of its call in progress (`callIdentified`). */
  private readonly identifying = new Map<string, Promise<boolean>>();

  constructor(private readonly ctx: DialerContext) {}

  /**
   * A callback named an attempt's call by the carrier's own id, where the carrier answered the
   * request to place it with another (Plivo's request UUID): the attempt follows the call by this id
   * from now on. A report that finishes the same attempt waits for this first (`finish`), so the
   * finished attempt keeps the call's id.
   */
  callIdentified(attemptId: string, callSid: string): Promise<boolean> {
    const parsed = parseAttemptId(attemptId);
    if (!parsed) return Promise.resolve(false);
    const before = this.identifying.get(attemptId) ?? Promise.resolve(true);
    const work = before.then(() => this.ctx.store.identifyCall(parsed.campaignId, attemptId, callSid));
    const settled = work.catch(() => false);
    this.identifying.set(attemptId, settled);
    void settled.then(() => {
      if (this.identifying.get(attemptId) === settled) this.identifying.delete(attemptId);
    });
    return work;
  }

  /** An attempt, named by a callback, ended with `outcome`. */
  async finish(ref: AttemptRef, outcome: AttemptOutcome, details: AttemptDetails): Promise<FinishResult> {
    const { store } = this.ctx;
    let attempt: OpenAttempt | null;
    if ('callSid' in ref) attempt = await store.findAttemptByCallSid(ref.callSid);
    else {
      await this.identifying.get(ref.attemptId);
      const parsed = parseAttemptId(ref.attemptId);
      attempt = parsed ? await store.getOpenAttempt(parsed.campaignId, ref.attemptId) : null;
    }
    if (!attempt) return 'not_open';
    return this.settle(attempt, outcome, details);
  }

  /**
   * Finishes an open attempt with `outcome`: the next attempt after the delay, or the contact's
   * final outcome.
   */
  async settle(
    attempt: OpenAttempt,
    outcome: AttemptOutcome,
    details: AttemptDetails,
    opts: SettleOptions = {},
  ): Promise<FinishResult> {
    const { store, metrics } = this.ctx;
    const [campaign, contact] = await Promise.all([
      store.getCampaign(attempt.campaignId),
      store.getContact(attempt.campaignId, attempt.contactId),
    ]);
    if (!campaign || !contact) return 'not_open';
    const now = this.ctx.clock.now();
    ({ outcome, details } = outcomeAtCancel(campaign, outcome, details, now));
    const step = opts.final
      ? ({ state: 'done', outcome } as const)
      : nextStep({
          outcome,
          attemptsMade: contact.attempts.length,
          retry: campaign.spec.retry,
          campaignOpen: campaign.state === 'running' || campaign.state === 'paused',
          nowMs: now,
        });
    const after = await store.finishAttempt({
      campaignId: campaign.id,
      attemptId: attempt.id,
      nowMs: now,
      result: { kind: 'counted', outcome, details },
      next:
        step.state === 'retry'
          ? { state: 'waiting', dueAtMs: step.dueAtMs }
          : { state: 'done', outcome: step.outcome, note: opts.note ?? null },
    });
    if (!after) return 'not_open';
    metrics.campaignDials.inc({ outcome });
    if (outcome !== 'cancelled') await this.afterResult(campaign, attempt.id, isBreakerFailure(outcome));
    else this.ctx.wake();
    return 'recorded';
  }

  /**
   * The carrier refused to place the call for now: the attempt does not count, the contact waits
   * until `dueAtMs`. It still counts as a failure for the breaker.
   */
  async refund(attempt: OpenAttempt, reason: string, dueAtMs: number) {
    const { store } = this.ctx;
    const campaign = await store.getCampaign(attempt.campaignId);
    if (!campaign) return;
    const after = await store.finishAttempt({
      campaignId: campaign.id,
      attemptId: attempt.id,
      nowMs: this.ctx.clock.now(),
      result: { kind: 'refunded', reason },
      next: { state: 'waiting', dueAtMs },
    });
    if (after) await this.afterResult(campaign, attempt.id, true);
  }

  /** A result entered the breaker's window: check the breaker, free the slot, maybe complete. */
  private async afterResult(campaign: CampaignRecord, id: string, failed: boolean): Promise<void> {
    if (await recordResult(this.ctx, campaign, { id, failed })) return;
    await completeIfDone(this.ctx, campaign);
    this.ctx.wake();
  }
}
