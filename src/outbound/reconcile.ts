// Reconciliation, every `reconcileEveryMs`, for each campaign with open attempts:
//   - A dialer that dies leaves its open attempts behind; its heartbeat lapses and another dialer
//     adopts them. An attempt with a call id is reconciled from the carrier's call status: at once
//     when adopted, otherwise once the call is `statusCheckAfterMs` old, since a carrier does not
//     send a final status callback twice and one may be lost. A call still in progress is asked
//     about again after `statusPollMs`, doubled each time up to `statusPollMaxMs`: a few requests
//     per long call, and a lost callback costs minutes, not the campaign.
//   - An attempt with no call id (the process died between the claim and the carrier's answer, or
//     the request timed out) may or may not have placed a call, so it is never dialed again on a
//     guess: it waits `lostDispatchGraceMs` for a callback that names it (the attempt id travels
//     with the call as its context), and if none does, it is closed as `failed` with the reason
//     `lost_before_dispatch`, and the contact is not retried: calling someone twice is worse than
//     once too few, and the results show who to follow up.
import type { CampaignRecord, OpenAttempt } from '../store/campaign-records.js';
import type { DialerContext } from './dialer-context.js';
import type { Outcomes } from './outcomes.js';

interface StatusCheck {
  atMs: number;
  nextGapMs: number;
}

export class Reconciler {
  /** Attempt id → when to next ask the carrier about it, and the wait after that. */
  private readonly statusChecks = new Map<string, StatusCheck>();

  constructor(
    private readonly ctx: DialerContext,
    private readonly outcomes: Outcomes,
    private readonly isDispatching: (attemptId: string) => boolean,
  ) {}

  async reconcile(campaign: CampaignRecord): Promise<void> {
    const { store, owner } = this.ctx;
    const open = await store.openAttempts(campaign.id);
    const others = [...new Set(open.map((a) => a.owner).filter((o) => o !== owner))];
    const live = await store.liveDialers(others, this.ctx.clock.now());
    for (const attempt of open) {
      if (attempt.owner !== owner && !(await this.adopt(campaign, attempt, live))) continue;
      if (this.isDispatching(attempt.id)) continue;
      if (attempt.callSid === null) await this.closeIfLost(attempt);
      else await this.askCarrier(campaign, attempt, attempt.callSid);
    }
    const openIds = new Set(open.map((a) => a.id));
    for (const id of this.statusChecks.keys())
      if (!openIds.has(id) && id.startsWith(`${campaign.id}.`)) this.statusChecks.delete(id);
  }

  /** Takes over an attempt whose dialer stopped; false when its dialer lives or another took it. */
  private async adopt(campaign: CampaignRecord, attempt: OpenAttempt, live: Set<string>): Promise<boolean> {
    const { store, owner } = this.ctx;
    if (live.has(attempt.owner)) return false;
    if (!(await store.adoptAttempt(campaign.id, attempt.id, attempt.owner, owner))) return false;
    this.ctx.log.warn(
      { campaignId: campaign.id, attemptId: attempt.id, from: attempt.owner, callSid: attempt.callSid },
      'adopted an attempt of a dialer that stopped',
    );
    this.statusChecks.set(attempt.id, {
      atMs: this.ctx.clock.now(),
      nextGapMs: this.ctx.options.statusPollMs,
    });
    return true;
  }

  private async closeIfLost(attempt: OpenAttempt): Promise<void> {
    if (this.ctx.clock.now() - attempt.claimedAtMs < this.ctx.options.lostDispatchGraceMs) return;
    this.ctx.log.warn(
      { campaignId: attempt.campaignId, attemptId: attempt.id },
      'no call was ever named for an attempt: closed, not redialed',
    );
    await this.outcomes.settle(
      attempt,
      'failed',
      { reason: 'lost_before_dispatch' },
      { final: true, note: 'not redialed: the call may have been placed before the dialer stopped' },
    );
  }

  private async askCarrier(campaign: CampaignRecord, attempt: OpenAttempt, callSid: string): Promise<void> {
    const { options } = this.ctx;
    const now = this.ctx.clock.now();
    const check = this.statusChecks.get(attempt.id) ?? {
      atMs: attempt.claimedAtMs + options.statusCheckAfterMs,
      nextGapMs: options.statusPollMs,
    };
    if (now < check.atMs) return;
    this.statusChecks.set(attempt.id, {
      atMs: now + check.nextGapMs,
      nextGapMs: Math.min(check.nextGapMs * 2, options.statusPollMaxMs),
    });
    let status;
    try {
      status = await this.ctx.originator.status(callSid, campaign.spec.carrier);
    } catch (err) {
      this.ctx.log.warn(
        { attemptId: attempt.id, err: (err as Error).message },
        'could not read a call status; will ask again',
      );
      return;
    }
    if (status.state === 'ended') {
      await this.outcomes.settle(attempt, status.outcome, {
        durationMs: status.durationMs ?? null,
        answeredBy: status.answeredBy ?? null,
        reason: 'reconciled from the carrier call status',
      });
    } else if (status.state === 'unknown') {
      await this.outcomes.settle(attempt, 'failed', { reason: 'the carrier has no such call' });
    }
  }
}
