// The dialer: turns running campaigns' due contacts into calls and takes their outcomes back. One
// dialer runs per server process; several processes sharing a store share the work, the pace and
// the cap, because every decision that must hold across them is one atomic step of the store.
//
// This file composes the parts and is the dialer's one door:
//   pass-scheduler.ts  when a pass runs (one at a time; woken by a freed slot or a started campaign)
//   due-contacts.ts    one campaign's share of a pass: lease, calling window, do-not-call, claim
//   dispatch.ts        asking the carrier to place the call, and its refusals
//   outcomes.ts        an attempt's end, once: retry or final outcome, then breaker and completion
//   breaker.ts         the failure share over a sliding window pauses a campaign
//   completion.ts      a campaign with nothing left to dial completes
//   reconcile.ts       dead dialers' attempts adopted, lost dispatches closed, stale calls read back
//   gauges.ts          the campaign gauges
// Agent 429s on a campaign's calls lower its concurrency, which climbs back one call at a time (the
// admission rule inbound calls follow, call/admission.ts).
import { randomUUID } from 'node:crypto';
import { type AttemptOutcome, type CampaignRecord, parseAttemptId } from '../store/campaign-records.js';
import type { AttemptDetails } from '../store/campaign-store.js';
import { systemClock } from './clock.js';
import { completeIfDone } from './completion.js';
import {
  CampaignLocals,
  DEFAULT_DIALER_OPTIONS,
  type DialerContext,
  type DialerDeps,
  type DialerOptions,
} from './dialer-context.js';
import { Dispatcher } from './dispatch.js';
import { dialDueContacts } from './due-contacts.js';
import { updateGauges } from './gauges.js';
import { type AttemptRef, type FinishResult, Outcomes } from './outcomes.js';
import { Every, PassScheduler } from './pass-scheduler.js';
import { Reconciler } from './reconcile.js';

export { amdRequest } from './dispatch.js';
export { DEFAULT_DIALER_OPTIONS, type DialerDeps, type DialerOptions } from './dialer-context.js';
export type { AttemptRef, FinishResult } from './outcomes.js';

export class Dialer {
  /** `<instance>/<boot id>`: the owner of the attempts this process claims. */
  readonly owner: string;
  private readonly ctx: DialerContext;
  private readonly busy = new Set<Promise<unknown>>();
  private readonly scheduler: PassScheduler;
  private readonly outcomes: Outcomes;
  private readonly dispatcher: Dispatcher;
  private readonly reconciler: Reconciler;
  private readonly heartbeat: Every;
  private readonly reconciliation: Every;
  private readonly gauges: Every;

  constructor(deps: DialerDeps) {
    const clock = deps.clock ?? systemClock;
    const options: DialerOptions = { ...DEFAULT_DIALER_OPTIONS, ...deps.options };
    this.owner = `${deps.instanceId}/${randomUUID().slice(0, 8)}`;
    this.ctx = {
      store: deps.store,
      originator: deps.originator,
      metrics: deps.metrics,
      notify: deps.notify,
      clock,
      options,
      log: deps.logger.child({ component: 'dialer', dialer: this.owner }),
      owner: this.owner,
      campaigns: new CampaignLocals(clock, options.agentRecoverEveryMs),
      track: (work) => this.track(work),
      wake: () => this.wake(),
    };
    this.scheduler = new PassScheduler(
      clock,
      () => this.pass(),
      (work) => this.track(work),
    );
    this.outcomes = new Outcomes(this.ctx);
    this.dispatcher = new Dispatcher(this.ctx, this.outcomes);
    this.reconciler = new Reconciler(this.ctx, this.outcomes, (id) => this.dispatcher.isDispatching(id));
    this.heartbeat = new Every(options.heartbeatMs);
    this.reconciliation = new Every(options.reconcileEveryMs);
    this.gauges = new Every(options.gaugeEveryMs);
  }

  get isRunning(): boolean {
    return this.scheduler.running;
  }

  start(): void {
    this.scheduler.start();
  }

  /** Stops dialing; waits for the pass and the dispatches in hand. Open attempts stay open for another dialer. */
  async stop(): Promise<void> {
    this.scheduler.stop();
    await this.idle();
  }

  /**
   * The instance drains: no attempt is claimed from now on, and what was asked of the carrier is
   * answered and recorded. The calls themselves go on; their outcomes reach the store through
   * whichever instance gets their callbacks, and the attempts are adopted once this one is gone.
   */
  async drain(): Promise<void> {
    this.scheduler.stop();
    await this.dispatcher.answered();
    await this.idle();
  }

  /** Looks for work at once: a campaign started or resumed, or a call slot freed. */
  wake(): void {
    this.scheduler.wake();
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
    return this.track(this.outcomes.finish(ref, outcome, details));
  }

  /**
   * The carrier's final report about the call `callSid`, whose context names `attemptId`: it finishes
   * the attempt that recorded this call id. The report may come before the answer that records it
   * (or that answer was lost): the id is then recorded from the report, only if the attempt has none
   * yet, never replaced. One tracked step, so a stopping dialer waits for all of it.
   */
  attemptReported(
    attemptId: string,
    callSid: string,
    outcome: AttemptOutcome,
    details: AttemptDetails,
  ): Promise<FinishResult> {
    const ref = { callSid };
    const work = async (): Promise<FinishResult> => {
      if ((await this.outcomes.finish(ref, outcome, details)) === 'recorded') return 'recorded';
      if (!(await this.callPlaced(attemptId, callSid))) return 'not_open';
      return this.outcomes.finish(ref, outcome, details);
    };
    return this.track(work());
  }

  /**
   * A webhook named an attempt (through the context it carries) and its carrier call id: recorded
   * if the attempt had none yet, which rescues an attempt whose `originate` answer was lost.
   */
  private async callPlaced(attemptId: string, callSid: string): Promise<boolean> {
    const parsed = parseAttemptId(attemptId);
    if (!parsed) return false;
    const attempt = await this.ctx.store.getOpenAttempt(parsed.campaignId, attemptId);
    if (!attempt) return false;
    if (attempt.callSid !== null) return attempt.callSid === callSid;
    return this.ctx.store.recordCallSid(parsed.campaignId, attemptId, callSid);
  }

  /** The carrier's own id of an attempt's call, where it answered the request with another (outcomes.ts). */
  callIdentified(attemptId: string, callSid: string): Promise<boolean> {
    return this.track(this.outcomes.callIdentified(attemptId, callSid));
  }

  /** The agent refused a session (429) for one of the campaign's calls: dial fewer for a while. */
  async agentRefused(campaignId: string): Promise<void> {
    const campaign = await this.ctx.store.getCampaign(campaignId);
    if (!campaign) return;
    const open = await this.ctx.store.openAttempts(campaignId);
    this.ctx.campaigns.of(campaign).concurrency.refused(open.length);
    this.ctx.log.warn(
      { campaignId, inFlight: open.length, limit: this.ctx.campaigns.cap(campaign) },
      'agent refused a campaign call: lowering its concurrency',
    );
  }

  /** Asks the carrier to hang up every call of the campaign that is in flight (cancel). */
  async hangUpAll(campaignId: string): Promise<number> {
    const { store, originator, log } = this.ctx;
    const campaign = await store.getCampaign(campaignId);
    const open = await store.openAttempts(campaignId);
    let asked = 0;
    await Promise.all(
      open.map(async (attempt) => {
        if (attempt.callSid === null) return;
        try {
          await originator.hangup(attempt.callSid, campaign?.spec.carrier ?? null);
          asked += 1;
        } catch (err) {
          log.warn(
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

  /** One pass over every active campaign; resolves to how long to wait before the next. */
  private async pass(): Promise<number> {
    try {
      return await this.passOnce();
    } catch (err) {
      this.ctx.log.error({ err: (err as Error).message }, 'dialer pass failed; trying again shortly');
      return this.ctx.options.idlePollMs;
    }
  }

  private async passOnce(): Promise<number> {
    const { store, clock, options } = this.ctx;
    const now = clock.now();
    if (this.heartbeat.due(now)) await store.beatDialer(this.owner, now, options.heartbeatTtlMs);
    const reconcile = this.reconciliation.due(now);
    const gauges = this.gauges.due(now);

    const seen: CampaignRecord[] = [];
    let nextMs = options.idlePollMs;
    for (const id of await store.activeCampaignIds()) {
      const campaign = await store.getCampaign(id);
      if (campaign && reconcile) await this.reconciler.reconcile(campaign);
      if (!campaign || (campaign.state !== 'running' && campaign.state !== 'paused')) {
        await store.settleCampaign(id);
        continue;
      }
      seen.push(campaign);
      if (campaign.state === 'paused') continue;
      nextMs = Math.min(
        nextMs,
        await dialDueContacts(this.ctx, campaign, (c, contact, attempt) =>
          this.dispatcher.dispatch(c, contact, attempt),
        ),
      );
      await completeIfDone(this.ctx, campaign);
    }
    if (gauges) await updateGauges(this.ctx, seen);
    return nextMs;
  }
}
