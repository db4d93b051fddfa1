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
   * Seconds until every waiting contact has been dialed at the pace achieved (the pace set before
   * the first minute); null unless running. Retry delays and closed windows make it longer.
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
    etaSeconds: campaign.state === 'running' ? Math.ceil(waiting / rate) : null,
  };
}
