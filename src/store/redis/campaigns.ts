// Campaigns, their contacts, the attempts in flight and the breaker's window, in Redis. A campaign's
// keys share the hash tag `{c:<id>}`, so each step that must be atomic is one Lua script on one
// slot; a campaign holds at most MAX_CONTACTS_PER_CAMPAIGN contacts, so no slot grows without bound,
// and every key of an ended campaign expires after the retention period. Contact changes are
// computed in JavaScript (campaign-transitions.ts and pace.ts, shared with SQLite) and written by a
// script only if what was read is still stored: a compare-and-set that retries on a lost race
// (`untilWon`, the one loop every such step goes through).
//
// The key layout is in campaign-context.ts; each interface is built in its own file on that context.
import type { Redis } from 'ioredis';
import type { CampaignContacts, Campaigns, DialAttempts, DialResults } from '../campaign-store.js';
import { campaignContext } from './campaign-context.js';
import { redisCampaignContacts } from './campaign-contacts.js';
import { redisCampaignLifecycle } from './campaign-lifecycle.js';
import { redisDialAttempts } from './dial-attempts.js';
import { redisDialResults } from './dial-results.js';

export type RedisCampaigns = Campaigns & CampaignContacts & DialAttempts & DialResults;

export function redisCampaigns(client: Redis, prefix: string): RedisCampaigns {
  const ctx = campaignContext(client, prefix);
  return {
    ...redisCampaignLifecycle(ctx),
    ...redisCampaignContacts(ctx),
    ...redisDialAttempts(ctx),
    ...redisDialResults(ctx),
  };
}
