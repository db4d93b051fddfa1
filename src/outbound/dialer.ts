// The dialer: the loop that turns a running campaign's due contacts into calls, and takes their
// outcomes back. One dialer runs per server process; several processes sharing a store share the
// work, the pace and the cap, because every decision that must hold across them is one atomic step
// of the store.
//
// A pass, for each running campaign:
//   1. lease a few due contacts (each to one dialer at a time);
//   2. a contact outside its calling window waits until the next opening (it is not skipped);
//   3. a number on the do-not-call list, checked right before the dial, ends as `dnc`;
//   4. `beginAttempt` claims the attempt durably, under the cap and the pace, before the carrier is
//      asked; a refusal (pace, cap) puts the rest back and says when to look again;
//   5. the carrier is asked to place the call, and its call id is recorded the moment it returns
//      (where that id names the request rather than the call, the call's own id replaces it once a
//      callback brings it: `callIdentified`).
// Outcomes come back through `attemptFinished` (status callbacks and call records, from the code
// that owns the carrier), once per attempt whatever the number of callbacks.
//
// Faults:
//   - A dialer that dies leaves its open attempts behind; its heartbeat lapses and another dialer
//     adopts them. An attempt with a call id is reconciled from the carrier's call status.
//   - An attempt with no call id (the process died between the claim and the carrier's answer, or
//     the request timed out) may or may not have placed a call, so it is never dialed again on a
//     guess: it waits `lostDispatchGraceMs` for a callback that names it (the attempt id travels
//     with the call as its context), and if none does, it is closed as `failed` with the reason
//     `lost_before_dispatch`, and the contact is not retried: calling someone twice is worse than
//     once too few, and the results show who to follow up.
//   - A carrier API error that the carrier may accept later (429, 5xx) puts the contact back
//     without spending an attempt; one refused for good fails the attempt (carrier-errors.ts).
//   - Agent 429s on a campaign's calls lower its concurrency, which climbs back one call at a time
//     (the admission rule inbound calls follow, call/admission.ts).
//   - The breaker pauses a campaign whose failure share over a sliding window passes its threshold
//     (busy and no answer are not failures); a resume starts a fresh window.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AdmissionControl } from '../call/admission.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AttemptDetails } from '../store/campaign-store.js';
import type { Store } from '../store/store.js';
import { CallerIdPool } from './caller-ids.js';
import { classifyOriginateError } from './carrier-errors.js';
import { type DialerClock, systemClock } from './clock.js';
import type { CampaignNotifier } from './events.js';
import type { AmdRequest, Originator } from './ports.js';
import { campaignProgress } from './progress.js';
import {
  type AttemptOutcome,
  type CampaignRecord,
  type ContactRecord,
  type OpenAttempt,
  parseAttemptId,
} from '../store/campaign-records.js';
import { outcomeAtCancel } from './cancel-outcome.js';
import { isBreakerFailure, nextStep } from './retry-policy.js';
import { renderTemplate } from './template.js';
import { isWindowOpen, nextOpening } from './windows.js';

export interface DialerOptions {
  /** How long an idle dialer waits before looking for due contacts again. */
  idlePollMs: number;
  /** Most contacts leased per campaign in one pass. */
  leaseBatch: number;
  leaseMs: number;
  heartbeatMs: number;
  /** A dialer silent this long is dead and its attempts are adopted. */
  heartbeatTtlMs: number;
  /** How often open attempts are checked for dead owners, lost dispatches and stale calls. */
  reconcileEveryMs: number;
  /** How long an attempt with no call id waits for a callback naming it before it is closed as lost. */
  lostDispatchGraceMs: number;
  /** A call this old with no outcome is asked about at the carrier (lost callbacks), then this often. */
  statusCheckAfterMs: number;
  /** An adopted call is asked about at once, then this often until it ends. */
  statusPollMs: number;
  /** First delay after a carrier refusal it may lift; doubled per refusal of that contact. */
  carrierRetryDelayMs: number;
  carrierRetryMaxDelayMs: number;
  /** Refusals a contact may meet before its attempt fails for good. */
  maxCarrierRefusals: number;
  /** After an agent 429, a campaign's concurrency climbs back by one this often. */
  agentRecoverEveryMs: number;
  gaugeEveryMs: number;
}

export const DEFAULT_DIALER_OPTIONS: DialerOptions = {
  idlePollMs: 1_000,
  leaseBatch: 20,
  leaseMs: 30_000,
  heartbeatMs: 5_000,
  heartbeatTtlMs: 20_000,
  reconcileEveryMs: 10_000,
  lostDispatchGraceMs: 10 * 60_000,
  statusCheckAfterMs: 2 * 60 * 60_000,
  statusPollMs: 30_000,
  carrierRetryDelayMs: 30_000,
  carrierRetryMaxDelayMs: 10 * 60_000,
  maxCarrierRefusals: 10,
  agentRecoverEveryMs: 2_000,
  gaugeEveryMs: 5_000,
};

export interface DialerDeps {
  store: Store;
  originator: Originator;
  metrics: Metrics;
  logger: Logger;
  notify: CampaignNotifier;
  clock?: DialerClock;
  /** This instance's name; the dialer's owner id adds a per-process part, so a restart is a new owner. */
  instanceId: string;
  options?: Partial<DialerOptions>;
}

/** Where a callback says which attempt it is about. */
export type AttemptRef = { attemptId: string } | { callSid: string };

export type FinishResult = 'recorded' | 'not_open';

/** Per campaign, what this process keeps in memory: caller-ID rotation and the agent-429 limit. */
interface CampaignLocal {
  callerIds: CallerIdPool;
  concurrency: AdmissionControl;
}

export class Dialer {
  /** `<instance>/<boot id>`: the owner of the attempts this process claims. */
  readonly owner: string;
  private readonly clock: DialerClock;
  private readonly options: DialerOptions;
  private readonly log: Logger;
  private readonly local = new Map<string, CampaignLocal>();
  /** Attempts this process is asking the carrier to place right now. */
  private readonly dispatching = new Set<string>();
  /** Attempt id → the identification of its call in progress (`callIdentified`). */
  private readonly identifying = new Map<string, Promise<boolean>>();
  /** Attempt id → when to next ask the carrier about it. */
  private readonly statusChecks = new Map<string, number>();
  private readonly busy = new Set<Promise<unknown>>();
  private timer: unknown = null;
  private timerAtMs = Number.POSITIVE_INFINITY;
  private running = false;
  private passing = false;
  private passAgain = false;
  private nextHeartbeatAtMs = 0;
  private nextReconcileAtMs = 0;
  private nextGaugesAtMs = 0;

  constructor(private readonly deps: DialerDeps) {
    this.clock = deps.clock ?? systemClock;
    this.options = { ...DEFAULT_DIALER_OPTIONS, ...deps.options };
    this.owner = `${deps.instanceId}/${randomUUID().slice(0, 8)}`;
    this.log = deps.logger.child({ component: 'dialer', dialer: this.owner });
  }

  get isRunning(): boolean {
    return this.running;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops dialing; waits for the pass and the dispatches in hand. Open attempts stay open for another dialer. */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.idle();
  }

  /** Looks for work at once: a campaign started or resumed, or a call slot freed. */
  wake(): void {
    if (!this.running) return;
    if (this.passing) this.passAgain = true;
    else this.schedule(0);
  }

  /** Resolves when no pass, dispatch or outcome is in progress (tests). */
  async idle(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  /**
   * An attempt ended with `outcome`: from a status callback, a call record or a reconciliation.
   * Only the first report of an attempt counts; later ones answer `not_open`.
   */
  attemptFinished(
    ref: AttemptRef,
    outcome: AttemptOutcome,
    details: AttemptDetails = {},
  ): Promise<FinishResult> {
    return this.track(this.finishRef(ref, outcome, details));
  }

  /**
   * A webhook named an attempt (through the context it carries) and its carrier call id: recorded
   * if the attempt had none yet, which rescues an attempt whose `originate` answer was lost.
   */
  async callPlaced(attemptId: string, callSid: string): Promise<boolean> {
    const parsed = parseAttemptId(attemptId);
    if (!parsed) return false;
    const attempt = await this.deps.store.getOpenAttempt(parsed.campaignId, attemptId);
    if (!attempt) return false;
    if (attempt.callSid !== null) return attempt.callSid === callSid;
    return this.deps.store.recordCallSid(parsed.campaignId, attemptId, callSid);
  }

  /**
   * A callback named an attempt's call by the carrier's own id, where the carrier answered the
   * request to place it with another (Plivo's request UUID): the attempt follows the call by this id
   * from now on, for status reads, hang-ups and its results. A report that finishes the same attempt
   * waits for this first (`finishRef`), so the finished attempt keeps the call's id.
   */
  callIdentified(attemptId: string, callSid: string): Promise<boolean> {
    const parsed = parseAttemptId(attemptId);
    if (!parsed) return Promise.resolve(false);
    const before = this.identifying.get(attemptId) ?? Promise.resolve(true);
    const work = before.then(() => this.deps.store.identifyCall(parsed.campaignId, attemptId, callSid));
    const settled = work.catch(() => false);
    this.identifying.set(attemptId, settled);
    void settled.then(() => {
      if (this.identifying.get(attemptId) === settled) this.identifying.delete(attemptId);
    });
    return this.track(work);
  }

  /** The agent refused a session (429) for one of the campaign's calls: dial fewer for a while. */
  async agentRefused(campaignId: string): Promise<void> {
    const campaign = await this.deps.store.getCampaign(campaignId);
    if (!campaign) return;
    const open = await this.deps.store.openAttempts(campaignId);
    this.localOf(campaign).concurrency.refused(open.length);
    this.log.warn(
      { campaignId, inFlight: open.length, limit: this.cap(campaign) },
      'agent refused a campaign call: lowering its concurrency',
    );
  }

  /** Asks the carrier to hang up every call of the campaign that is in flight (cancel). */
  async hangUpAll(campaignId: string): Promise<number> {
    const campaign = await this.deps.store.getCampaign(campaignId);
    const open = await this.deps.store.openAttempts(campaignId);
    let asked = 0;
    await Promise.all(
      open.map(async (attempt) => {
        if (attempt.callSid === null) return;
        try {
          await this.deps.originator.hangup(attempt.callSid, campaign?.spec.carrier ?? null);
          asked += 1;
        } catch (err) {
          this.log.warn(
            { campaignId, attemptId: attempt.id, err: (err as Error).message },
            'could not hang up a campaign call',
          );
        }
      }),
    );
    return asked;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.busy.add(work);
    const done = () => this.busy.delete(work);
    work.then(done, done);
    return work;
  }

  private schedule(delayMs: number): void {
    if (!this.running) return;
    const at = this.clock.now() + delayMs;
    if (this.timer !== null && this.timerAtMs <= at) return;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timerAtMs = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.timerAtMs = Number.POSITIVE_INFINITY;
      void this.track(this.pass());
    }, delayMs);
  }

  private async pass(): Promise<void> {
    if (!this.running || this.passing) return;
    this.passing = true;
    let nextMs = this.options.idlePollMs;
    try {
      nextMs = await this.passOnce();
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'dialer pass failed; trying again shortly');
    } finally {
      this.passing = false;
    }
    if (this.passAgain) {
      this.passAgain = false;
      nextMs = 0;
    }
    this.schedule(nextMs);
  }

  /** One pass over every active campaign; returns how long to wait before the next. */
  private async passOnce(): Promise<number> {
    const { store } = this.deps;
    const now = this.clock.now();
    if (now >= this.nextHeartbeatAtMs) {
      await store.beatDialer(this.owner, now, this.options.heartbeatTtlMs);
      this.nextHeartbeatAtMs = now + this.options.heartbeatMs;
    }
    const reconcile = now >= this.nextReconcileAtMs;
    if (reconcile) this.nextReconcileAtMs = now + this.options.reconcileEveryMs;
    const gauges = now >= this.nextGaugesAtMs;
    if (gauges) this.nextGaugesAtMs = now + this.options.gaugeEveryMs;

    const seen: CampaignRecord[] = [];
    let nextMs = this.options.idlePollMs;
    for (const id of await store.activeCampaignIds()) {
      const campaign = await store.getCampaign(id);
      if (
        !campaign ||
        campaign.state === 'completed' ||
        campaign.state === 'cancelled' ||
        campaign.state === 'draft'
      ) {
        if (campaign && reconcile) await this.reconcile(campaign);
        await store.settleCampaign(id);
        continue;
      }
      seen.push(campaign);
      if (reconcile) await this.reconcile(campaign);
      if (campaign.state === 'running') {
        nextMs = Math.min(nextMs, await this.dialCampaign(campaign));
        await this.completeIfDone(campaign);
      }
    }
    if (gauges) await this.updateGauges(seen);
    return nextMs;
  }

  private localOf(campaign: CampaignRecord): CampaignLocal {
    let local = this.local.get(campaign.id);
    if (!local) {
      local = {
        callerIds: new CallerIdPool(campaign.spec.from),
        concurrency: new AdmissionControl({
          maxCalls: campaign.spec.pacing.maxConcurrent,
          recoverEveryMs: this.options.agentRecoverEveryMs,
          nowMs: () => this.clock.now(),
        }),
      };
      this.local.set(campaign.id, local);
    }
    return local;
  }

  private cap(campaign: CampaignRecord): number {
    return this.localOf(campaign).concurrency.current();
  }

  /** Dials what is due; returns when to look again (0: more may be due now). */
  private async dialCampaign(campaign: CampaignRecord): Promise<number> {
    const { store } = this.deps;
    const { spec } = campaign;
    // No more than the pace could let through now: the rest would only be leased and put back.
    const limit = Math.min(this.options.leaseBatch, Math.max(1, Math.ceil(spec.pacing.callsPerSecond)));
    const leased = await store.leaseDueContacts(campaign.id, {
      nowMs: this.clock.now(),
      limit,
      leaseMs: this.options.leaseMs,
    });
    for (const [i, contact] of leased.entries()) {
      const now = this.clock.now();
      if (!isWindowOpen(spec.schedule.windows, contact.timezone, now)) {
        const opening = nextOpening(spec.schedule.windows, contact.timezone, now) ?? now + 24 * 3_600_000;
        await store.releaseContact(campaign.id, contact.seq, opening);
        continue;
      }
      if (await store.getDoNotCall(contact.phone)) {
        if (
          await store.closeContact(campaign.id, contact.seq, {
            outcome: 'dnc',
            note: 'on the do-not-call list',
            nowMs: now,
          })
        ) {
          this.deps.metrics.campaignDials.inc({ outcome: 'dnc' });
        }
        continue;
      }
      const begun = await store.beginAttempt({
        campaignId: campaign.id,
        seq: contact.seq,
        owner: this.owner,
        from: this.localOf(campaign).callerIds.pick(contact.country),
        nowMs: now,
        maxConcurrent: this.cap(campaign),
        callsPerSecond: spec.pacing.callsPerSecond,
      });
      if (begun.ok) {
        this.dispatch(campaign, begun.contact, begun.attempt);
        continue;
      }
      if (begun.reason === 'not_waiting') continue;
      for (const rest of leased.slice(i)) await store.releaseContact(campaign.id, rest.seq, rest.dueAtMs);
      if (begun.reason === 'pace') return begun.waitMs;
      // At the cap a finishing call wakes the dialer; the poll is a safety net.
      return this.options.idlePollMs;
    }
    if (leased.length === limit) return 0;
    // Nothing more due: sleep until the next contact falls due (a window opens, a retry delay ends),
    // polling meanwhile for work another instance may have started.
    const nextDue = await store.nextDueAtMs(campaign.id);
    if (nextDue === null) return this.options.idlePollMs;
    return Math.min(this.options.idlePollMs, Math.max(0, nextDue - this.clock.now()));
  }

  /**
   * Asks the carrier to place the call. The request itself is not waited for by `idle` or `stop`
   * (it is bounded by the carrier client's timeout, and the attempt is durable either way); what
   * follows its answer is.
   */
  private dispatch(campaign: CampaignRecord, contact: ContactRecord, attempt: OpenAttempt): void {
    let amd: AmdRequest | null;
    try {
      amd = amdRequest(campaign, contact);
    } catch (err) {
      // Placeholders are checked at upload and at start; reaching here means the profile changed.
      void this.guard(
        this.settle(campaign.id, attempt.id, 'failed', { reason: (err as Error).message }, { final: true }),
      );
      return;
    }
    this.dispatching.add(attempt.id);
    const request = {
      to: contact.phone,
      from: attempt.from,
      carrier: campaign.spec.carrier,
      profile: campaign.spec.profile,
      variables: contact.variables,
      context: attempt.id,
      campaignId: campaign.id,
      amd,
      recording: campaign.spec.recording ?? null,
    };
    let call: Promise<{ callSid: string }>;
    try {
      call = this.deps.originator.originate(request);
    } catch (err) {
      call = Promise.reject(err);
    }
    call
      .then(
        ({ callSid }) => this.guard(this.dispatched(campaign, attempt, callSid)),
        (err: unknown) => this.guard(this.originateFailed(campaign, contact, attempt, err)),
      )
      .finally(() => this.dispatching.delete(attempt.id));
  }

  /** Tracks work started outside a pass and logs its failure (a store that went away, say). */
  private guard(work: Promise<unknown>): Promise<unknown> {
    return this.track(
      work.catch((err: Error) =>
        this.log.error({ err: err.message }, 'dialer step failed; reconciliation will retry it'),
      ),
    );
  }

  private async dispatched(campaign: CampaignRecord, attempt: OpenAttempt, callSid: string) {
    const { store, originator, metrics } = this.deps;
    metrics.campaignDialsStarted.inc();
    if (!(await store.recordCallSid(campaign.id, attempt.id, callSid))) {
      this.log.debug(
        { attemptId: attempt.id, callSid },
        'the call ended, or a callback named it, before this id was recorded',
      );
    }
    // A cancel that came while the carrier was placing this call could not hang it up: do it now,
    // by the call's own id if a callback has named it meanwhile.
    if ((await store.getCampaign(campaign.id))?.state === 'cancelled') {
      const current = (await store.getOpenAttempt(campaign.id, attempt.id))?.callSid ?? callSid;
      await originator.hangup(current, campaign.spec.carrier).catch((err: Error) => {
        this.log.warn(
          { attemptId: attempt.id, err: err.message },
          'could not hang up a call of a cancelled campaign',
        );
      });
    }
  }

  private async originateFailed(
    campaign: CampaignRecord,
    contact: ContactRecord,
    attempt: OpenAttempt,
    err: unknown,
  ) {
    const { kind, code } = classifyOriginateError(err);
    this.deps.metrics.campaignCarrierErrors.inc({ kind });
    const log = this.log.child({ campaignId: campaign.id, attemptId: attempt.id, code });
    if (kind === 'unknown') {
      log.warn('the carrier did not answer the request to place a call: waiting for a callback to name it');
      return;
    }
    if (kind === 'retry_later' && contact.carrierErrors + 1 < this.options.maxCarrierRefusals) {
      const delay = Math.min(
        this.options.carrierRetryMaxDelayMs,
        this.options.carrierRetryDelayMs * 2 ** contact.carrierErrors,
      );
      log.warn({ retryInMs: delay }, 'the carrier refused to place a call for now: the contact waits');
      const now = this.clock.now();
      const after = await this.deps.store.finishAttempt({
        campaignId: campaign.id,
        attemptId: attempt.id,
        nowMs: now,
        result: { kind: 'refunded', reason: `carrier error ${code}` },
        next: { state: 'waiting', dueAtMs: now + delay },
      });
      if (after) await this.afterResult(campaign.id, attempt.id, true);
      return;
    }
    log.warn('the carrier refused to place a call: the attempt fails');
    await this.settle(campaign.id, attempt.id, 'failed', { reason: `carrier error ${code}` });
  }

  private async finishRef(
    ref: AttemptRef,
    outcome: AttemptOutcome,
    details: AttemptDetails,
  ): Promise<FinishResult> {
    const { store } = this.deps;
    let attempt: OpenAttempt | null;
    if ('callSid' in ref) attempt = await store.findAttemptByCallSid(ref.callSid);
    else {
      await this.identifying.get(ref.attemptId);
      const parsed = parseAttemptId(ref.attemptId);
      attempt = parsed ? await store.getOpenAttempt(parsed.campaignId, ref.attemptId) : null;
    }
    if (!attempt) return 'not_open';
    return this.settle(attempt.campaignId, attempt.id, outcome, details);
  }

  /**
   * Finishes an open attempt with `outcome`: the next attempt after the delay, or the contact's
   * final outcome. `final` closes the contact whatever the retry policy says.
   */
  private async settle(
    campaignId: string,
    id: string,
    outcome: AttemptOutcome,
    details: AttemptDetails,
    opts: { final?: boolean; note?: string } = {},
  ): Promise<FinishResult> {
    const { store, metrics } = this.deps;
    const [campaign, attempt] = await Promise.all([
      store.getCampaign(campaignId),
      store.getOpenAttempt(campaignId, id),
    ]);
    if (!campaign || !attempt) return 'not_open';
    const contact = await store.getContact(campaignId, attempt.contactId);
    if (!contact) return 'not_open';
    const now = this.clock.now();
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
      campaignId,
      attemptId: id,
      nowMs: now,
      result: { kind: 'counted', outcome, details },
      next:
        step.state === 'retry'
          ? { state: 'waiting', dueAtMs: step.dueAtMs }
          : { state: 'done', outcome: step.outcome, note: opts.note ?? null },
    });
    if (!after) return 'not_open';
    this.statusChecks.delete(id);
    metrics.campaignDials.inc({ outcome });
    if (outcome !== 'cancelled') await this.afterResult(campaignId, id, isBreakerFailure(outcome));
    else this.wake();
    return 'recorded';
  }

  /** A result entered the breaker's window: check the breaker, free the slot, maybe complete. */
  private async afterResult(campaignId: string, id: string, failed: boolean): Promise<void> {
    const { store } = this.deps;
    const campaign = await store.getCampaign(campaignId);
    if (!campaign) return;
    const now = this.clock.now();
    const windowMs = campaign.spec.breaker.windowSeconds * 1_000;
    await store.recordDialResult(campaignId, { id, atMs: now, failed }, windowMs);
    if (campaign.state === 'running') {
      if (await this.checkBreaker(campaign, now)) return;
      await this.completeIfDone(campaign);
    }
    this.wake();
  }

  private async checkBreaker(campaign: CampaignRecord, now: number): Promise<boolean> {
    const { store } = this.deps;
    const { breaker } = campaign.spec;
    const since = Math.max(now - breaker.windowSeconds * 1_000, campaign.breakerSinceMs);
    const { calls, failures } = await store.dialResultCounts(campaign.id, since);
    if (calls < breaker.minCalls || failures / calls <= breaker.failureShare) return false;
    const message =
      `${failures} of the last ${calls} calls failed within ${breaker.windowSeconds} s, more than ` +
      `${Math.round(breaker.failureShare * 100)}%: check the carrier and the agent, then resume`;
    const paused = await store.transitionCampaign(campaign.id, ['running'], 'paused', {
      pause: { by: 'breaker', message, atMs: now },
    });
    if (!paused) return false;
    this.deps.metrics.campaignBreakerTrips.inc();
    this.log.warn({ campaignId: campaign.id, calls, failures }, `campaign paused by its breaker: ${message}`);
    this.deps.notify({
      name: 'campaign.paused',
      campaign: paused,
      progress: await campaignProgress(store, paused, now),
      atMs: now,
    });
    return true;
  }

  private async completeIfDone(campaign: CampaignRecord): Promise<void> {
    const { store } = this.deps;
    if (await store.hasUnfinishedContacts(campaign.id)) return;
    const now = this.clock.now();
    const done = await store.transitionCampaign(campaign.id, ['running'], 'completed', { endedAtMs: now });
    if (!done) return;
    this.local.delete(campaign.id);
    this.log.info({ campaignId: campaign.id }, 'campaign completed');
    this.deps.notify({
      name: 'campaign.completed',
      campaign: done,
      progress: await campaignProgress(store, done, now),
      atMs: now,
    });
  }

  /** Adopts the attempts of dead dialers, closes lost dispatches, and asks the carrier about stale calls. */
  private async reconcile(campaign: CampaignRecord): Promise<void> {
    const { store, originator } = this.deps;
    const open = await store.openAttempts(campaign.id);
    const others = [...new Set(open.map((a) => a.owner).filter((o) => o !== this.owner))];
    const live = await store.liveDialers(others, this.clock.now());
    for (const attempt of open) {
      const now = this.clock.now();
      if (attempt.owner !== this.owner) {
        if (live.has(attempt.owner)) continue;
        if (!(await store.adoptAttempt(campaign.id, attempt.id, attempt.owner, this.owner))) continue;
        this.log.warn(
          { campaignId: campaign.id, attemptId: attempt.id, from: attempt.owner, callSid: attempt.callSid },
          'adopted an attempt of a dialer that stopped',
        );
        this.statusChecks.set(attempt.id, now);
      }
      if (this.dispatching.has(attempt.id)) continue;
      if (attempt.callSid === null) {
        if (now - attempt.claimedAtMs < this.options.lostDispatchGraceMs) continue;
        this.log.warn(
          { campaignId: campaign.id, attemptId: attempt.id },
          'no call was ever named for an attempt: closed, not redialed',
        );
        await this.settle(
          campaign.id,
          attempt.id,
          'failed',
          { reason: 'lost_before_dispatch' },
          { final: true, note: 'not redialed: the call may have been placed before the dialer stopped' },
        );
        continue;
      }
      const checkAt =
        this.statusChecks.get(attempt.id) ?? attempt.claimedAtMs + this.options.statusCheckAfterMs;
      if (now < checkAt) continue;
      this.statusChecks.set(attempt.id, now + this.options.statusPollMs);
      let status;
      try {
        status = await originator.status(attempt.callSid, campaign.spec.carrier);
      } catch (err) {
        this.log.warn(
          { attemptId: attempt.id, err: (err as Error).message },
          'could not read a call status; will ask again',
        );
        continue;
      }
      if (status.state === 'ended') {
        await this.settle(campaign.id, attempt.id, status.outcome, {
          durationMs: status.durationMs ?? null,
          answeredBy: status.answeredBy ?? null,
          reason: 'reconciled from the carrier call status',
        });
      } else if (status.state === 'unknown') {
        await this.settle(campaign.id, attempt.id, 'failed', { reason: 'the carrier has no such call' });
      }
    }
    const openIds = new Set(open.map((a) => a.id));
    for (const id of this.statusChecks.keys())
      if (!openIds.has(id) && id.startsWith(`${campaign.id}.`)) this.statusChecks.delete(id);
  }

  private async updateGauges(campaigns: readonly CampaignRecord[]): Promise<void> {
    const { metrics, store } = this.deps;
    let active = 0;
    let limit = 0;
    let pace = 0;
    let breaker = 0;
    const states = { running: 0, paused: 0 };
    for (const campaign of campaigns) {
      active += (await store.openAttempts(campaign.id)).length;
      if (campaign.state === 'running') {
        limit += this.cap(campaign);
        pace += campaign.spec.pacing.callsPerSecond;
        states.running += 1;
      } else if (campaign.state === 'paused') {
        states.paused += 1;
        if (campaign.pause?.by === 'breaker') breaker += 1;
      }
    }
    metrics.campaignCallsActive.set(active);
    metrics.campaignConcurrencyLimit.set(limit);
    metrics.campaignPaceTarget.set(pace);
    metrics.campaignsPausedByBreaker.set(breaker);
    for (const [state, n] of Object.entries(states)) metrics.campaigns.set({ state }, n);
  }
}

/** The detection settings of one call, the voicemail filled from the contact's variables. */
export function amdRequest(campaign: CampaignRecord, contact: ContactRecord): AmdRequest | null {
  const { amd } = campaign.spec;
  if (amd.mode === 'off') return null;
  const text = amd.voicemail?.text;
  return {
    mode: amd.mode,
    voicemailText: text === undefined ? null : renderTemplate(text, contact.variables),
    voicemailAudioUrl: amd.voicemail?.audioUrl ?? null,
  };
}
