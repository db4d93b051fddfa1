// What every part of the dialer shares: its dependencies and options, the owner id of the attempts
// this process claims, and what it keeps in memory per campaign (caller-ID rotation, the agent-429
// limit on concurrency).
import type { Logger } from 'pino';
import { AdmissionControl } from '../call/intake/admission.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CampaignRecord } from '../store/campaign-records.js';
import type { Store } from '../store/store.js';
import { CallerIdPool } from './caller-ids.js';
import type { DialerClock } from './clock.js';
import type { CampaignNotifier } from './events.js';
import type { Originator } from './ports.js';

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
  /**
   * A call this old with no outcome is asked about at the carrier: its final status callback may
   * have been lost. An adopted call is asked about at once.
   */
  statusCheckAfterMs: number;
  /** The wait before asking again about a call still in progress, doubled each time up to the max. */
  statusPollMs: number;
  statusPollMaxMs: number;
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
  // Past any ringing and detection: a call this old is either answered or its final status is lost.
  statusCheckAfterMs: 5 * 60_000,
  statusPollMs: 30_000,
  statusPollMaxMs: 30 * 60_000,
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

export interface DialerContext {
  readonly store: Store;
  readonly originator: Originator;
  readonly metrics: Metrics;
  readonly notify: CampaignNotifier;
  readonly clock: DialerClock;
  readonly options: DialerOptions;
  readonly log: Logger;
  /** `<instance>/<boot id>`: the owner of the attempts this process claims. */
  readonly owner: string;
  readonly campaigns: CampaignLocals;
  /** Registers work that `idle()` and `stop()` wait for. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Looks for work at once: a slot freed, a campaign changed. */
  wake(): void;
}

interface CampaignLocal {
  callerIds: CallerIdPool;
  concurrency: AdmissionControl;
}

/** Per campaign, what this process keeps in memory, made on first use. */
export class CampaignLocals {
  private readonly byId = new Map<string, CampaignLocal>();

  constructor(
    private readonly clock: DialerClock,
    private readonly recoverEveryMs: number,
  ) {}

  of(campaign: CampaignRecord): CampaignLocal {
    let local = this.byId.get(campaign.id);
    if (!local) {
      local = {
        callerIds: new CallerIdPool(campaign.spec.from),
        concurrency: new AdmissionControl({
          maxCalls: campaign.spec.pacing.maxConcurrent,
          recoverEveryMs: this.recoverEveryMs,
          nowMs: () => this.clock.now(),
        }),
      };
      this.byId.set(campaign.id, local);
    }
    return local;
  }

  /** The campaign's cap on calls in flight, lowered for a while after agent 429s. */
  cap(campaign: CampaignRecord): number {
    return this.of(campaign).concurrency.current();
  }

  forget(campaignId: string): void {
    this.byId.delete(campaignId);
  }
}

/**
 * The dialer's timing from the configuration: an instance beats four times per failover period and
 * looks for dead owners twice per period, so a dead one's calls are adopted within one and a half
 * periods; an adopted call still live at the carrier is asked about again after one and a half
 * periods, then at doubling intervals. The default period gives the dialer's own defaults.
 */
export function dialerOptionsOf(dialer: Config['dialer']): Partial<DialerOptions> {
  if (dialer === undefined) return {};
  const { failoverMs, lostDispatchGraceMs } = dialer;
  return {
    heartbeatTtlMs: failoverMs,
    heartbeatMs: Math.min(DEFAULT_DIALER_OPTIONS.heartbeatMs, Math.floor(failoverMs / 4)),
    reconcileEveryMs: Math.min(DEFAULT_DIALER_OPTIONS.reconcileEveryMs, Math.floor(failoverMs / 2)),
    statusPollMs: Math.min(DEFAULT_DIALER_OPTIONS.statusPollMs, Math.floor(failoverMs * 1.5)),
    lostDispatchGraceMs,
  };
}
