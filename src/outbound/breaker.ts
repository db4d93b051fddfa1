// The campaign's circuit breaker: each finished attempt enters a sliding window of results in the
// store (shared by every instance); a campaign whose failure share over the window passes its
// threshold is paused (busy and no answer are the callee's doing, not failures). A resume starts a
// fresh window (`breakerSinceMs`).
import type { CampaignRecord } from '../store/campaign-records.js';
import { moveCampaign } from '../store/campaign-transitions.js';
import type { DialerContext } from './dialer-context.js';
import { campaignProgress } from './progress.js';

/** Records one result; true when it tripped the breaker and paused the campaign. */
export async function recordResult(
  ctx: DialerContext,
  campaign: CampaignRecord,
  result: { id: string; failed: boolean },
): Promise<boolean> {
  const { store } = ctx;
  const { breaker } = campaign.spec;
  const now = ctx.clock.now();
  const windowMs = breaker.windowSeconds * 1_000;
  await store.recordDialResult(campaign.id, { ...result, atMs: now }, windowMs);
  if (campaign.state !== 'running') return false;
  const since = Math.max(now - windowMs, campaign.breakerSinceMs);
  const { calls, failures } = await store.dialResultCounts(campaign.id, since);
  if (calls < breaker.minCalls || failures / calls <= breaker.failureShare) return false;
  const message =
    `${failures} of the last ${calls} calls failed within ${breaker.windowSeconds} s, more than ` +
    `${Math.round(breaker.failureShare * 100)}%: check the carrier and the agent, then resume`;
  const paused = await moveCampaign(store, campaign.id, 'trip', {
    pause: { by: 'breaker', message, atMs: now },
  });
  if (!paused) return false;
  ctx.metrics.campaignBreakerTrips.inc();
  ctx.log.warn({ campaignId: campaign.id, calls, failures }, `campaign paused by its breaker: ${message}`);
  ctx.notify({
    name: 'campaign.paused',
    campaign: paused,
    progress: await campaignProgress(store, paused, now),
    atMs: now,
  });
  return true;
}
