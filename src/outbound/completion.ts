// A running campaign with no contact left waiting or dialing is completed, once, by whichever
// dialer sees it first (the transition is one compare-and-set in the store).
import type { CampaignRecord } from '../store/campaign-records.js';
import { moveCampaign } from '../store/campaign-transitions.js';
import type { DialerContext } from './dialer-context.js';
import { campaignProgress } from './progress.js';

export async function completeIfDone(ctx: DialerContext, campaign: CampaignRecord): Promise<void> {
  const { store } = ctx;
  if (campaign.state !== 'running') return;
  if (await store.hasUnfinishedContacts(campaign.id)) return;
  const now = ctx.clock.now();
  const done = await moveCampaign(store, campaign.id, 'complete', { endedAtMs: now });
  if (!done) return;
  ctx.campaigns.forget(campaign.id);
  ctx.log.info({ campaignId: campaign.id }, 'campaign completed');
  ctx.notify({
    name: 'campaign.completed',
    campaign: done,
    progress: await campaignProgress(store, done, now),
    atMs: now,
  });
}
