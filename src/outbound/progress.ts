// A campaign's progress: contacts per state, final outcomes, calls in flight, the pace set and the
// pace achieved over the last minute, and an estimate of the time left.
import type { Store } from '../store/store.js';
import type { CampaignRecord, ContactState, FinalOutcome } from '../store/campaign-records.js';

export const PACE_WINDOW_MS = 60_000;

export interface CampaignProgress {
  contacts: Record<ContactState, number> & { total: number };
  outcomes: Record<FinalOutcome, number>;
  inFlight: number;
  pace: {
    /** Calls per second the campaign is set to. */
    set: number;
    /** Calls begun per second over the last minute (or since the start, if sooner). */
    achieved: number;
  };
  /**
   * Seconds until the campaign's calls are over: every waiting contact dialed at the pace achieved
   * (the pace set before the first minute), plus the length of a call, judged by the oldest call
   * in flight (a call lasts at least as long as the longest one still going). So calls that still
   * ring or talk count: nothing waiting but calls up is not "0s left". Null unless running; retry
   * delays and closed windows make it longer.
   */
  etaSeconds: number | null;
}

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
