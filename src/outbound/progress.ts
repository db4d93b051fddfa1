// A campaign's progress: contacts per state, final outcomes, calls in flight, the pace set and the
// pace achieved over the last minute, and an estimate of the time left.
import type { Store } from '../store/store.js';
import type { CampaignProgress } from '../api/campaigns.js';
import type { CampaignRecord } from '../store/campaign-records.js';

export const PACE_WINDOW_MS = 60_000;

/** As the wire contract declares it (src/api/campaigns.ts). */
export type { CampaignProgress } from '../api/campaigns.js';

export async function campaignProgress(
  store: Store,
  campaign: CampaignRecord,
  nowMs: number,
): Promise<CampaignProgress> {
  const [tally, open] = await Promise.all([store.contactTally(campaign.id), store.openAttempts(campaign.id)]);
  const since = Math.max(nowMs - PACE_WINDOW_MS, campaign.startedAtMs ?? nowMs);
  const spanMs = nowMs - since;
  const begun = spanMs > 0 ? await store.attemptsBegunSince(campaign.id, since) : 0;
  const achieved = spanMs >= 1_000 ? begun / (spanMs / 1_000) : 0;
  const set = campaign.spec.pacing.callsPerSecond;
  const waiting = tally.states.pending + tally.states.retry;
  const rate = spanMs >= PACE_WINDOW_MS && achieved > 0 ? achieved : set;
  const total = Object.values(tally.states).reduce((sum, n) => sum + n, 0);
  return {
    contacts: { ...tally.states, total },
    outcomes: tally.outcomes,
    inFlight: open.length,
    pace: { set, achieved: Math.round(achieved * 100) / 100 },
    etaSeconds: campaign.state === 'running' ? estimateSeconds(waiting, rate, open, nowMs) : null,
  };
}

/** A call in flight lasts at least this long in the estimate: it has to ring and be answered. */
const MIN_CALL_MS = 5_000;

function estimateSeconds(
  waiting: number,
  perSecond: number,
  open: readonly { claimedAtMs: number }[],
  nowMs: number,
): number {
  if (waiting === 0 && open.length === 0) return 0;
  const oldestMs = open.reduce((age, call) => Math.max(age, nowMs - call.claimedAtMs), 0);
  const callMs = Math.max(MIN_CALL_MS, oldestMs);
  // The last call starts after the waiting contacts are dialed, then runs about a call's length;
  // the calls up now end sooner than that, unless nothing waits.
  return Math.ceil(waiting / perSecond + callMs / 1_000);
}
