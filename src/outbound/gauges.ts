// The campaign gauges, refreshed every `gaugeEveryMs` from the campaigns a pass saw.
import type { CampaignRecord } from '../store/campaign-records.js';
import type { DialerContext } from './dialer-context.js';

export async function updateGauges(ctx: DialerContext, campaigns: readonly CampaignRecord[]): Promise<void> {
  const { metrics, store } = ctx;
  let active = 0;
  let limit = 0;
  let pace = 0;
  let breaker = 0;
  const states = { running: 0, paused: 0 };
  for (const campaign of campaigns) {
    active += (await store.openAttempts(campaign.id)).length;
    if (campaign.state === 'running') {
      limit += ctx.campaigns.cap(campaign);
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
