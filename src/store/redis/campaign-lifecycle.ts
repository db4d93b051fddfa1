// Campaign records in Redis: creating, listing and moving a campaign between states, and the set
// of campaigns a dialer may have work in. An ended campaign's keys all expire after the retention.
import { type CampaignRecord } from '../campaign-records.js';
import { CAMPAIGN_RETENTION_MS, type Campaigns } from '../campaign-store.js';
import { decodeCursor, encodeCursor } from '../campaign-transitions.js';
import { type CampaignContext, STALE, untilWon } from './campaign-context.js';
import { redisScript } from './script.js';

const MS_DIGITS = 16;
/** Campaign list entries kept: far more than any operator pages through. */
const MAX_INDEXED_CAMPAIGNS = 100_000;
const CAMPAIGN_CURSOR = new RegExp(`^\\d{${MS_DIGITS}}cmp_[a-z0-9]{1,40}$`);

const compareAndSet = redisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`);

export function redisCampaignLifecycle(ctx: CampaignContext): Campaigns {
  const { client, k, allKeys, index, active } = ctx;
  const member = (record: CampaignRecord) =>
    `${String(record.createdAtMs).padStart(MS_DIGITS, '0')}${record.id}`;

  async function expireCampaign(id: string) {
    const tx = client.multi();
    for (const key of allKeys(id)) tx.pexpire(key, CAMPAIGN_RETENTION_MS);
    await tx.exec();
  }

  return {
    async createCampaign(record) {
      await client
        .multi()
        .set(k(record.id).meta, JSON.stringify(record), 'NX')
        .zadd(index, 0, member(record))
        .zremrangebyrank(index, 0, -MAX_INDEXED_CAMPAIGNS - 1)
        .exec();
    },

    async getCampaign(id) {
      const json = await client.get(k(id).meta);
      return json === null ? null : (JSON.parse(json) as CampaignRecord);
    },

    async listCampaigns({ limit, cursor }) {
      let max = cursor === undefined ? '+' : `(${decodeCursor(cursor, CAMPAIGN_CURSOR)}`;
      const campaigns: CampaignRecord[] = [];
      let last: string | null = null;
      // Members whose campaign expired are skipped (and dropped); a page reads on until it is full.
      for (let rounds = 0; rounds < 20; rounds++) {
        const members = await client.zrevrangebylex(index, max, '-', 'LIMIT', 0, limit + 1);
        if (members.length === 0) return { campaigns, nextCursor: null };
        const jsons = await client.mget(members.map((m) => k(m.slice(MS_DIGITS)).meta));
        for (const [i, m] of members.entries()) {
          const json = jsons[i];
          if (json === null || json === undefined) {
            await client.zrem(index, m);
            continue;
          }
          if (campaigns.length === limit) return { campaigns, nextCursor: encodeCursor(last ?? m) };
          campaigns.push(JSON.parse(json) as CampaignRecord);
          last = m;
        }
        if (members.length < limit + 1) return { campaigns, nextCursor: null };
        max = `(${members.at(-1)}`;
      }
      return { campaigns, nextCursor: last === null ? null : encodeCursor(last) };
    },

    transitionCampaign(id, from, to, patch) {
      const key = k(id).meta;
      return untilWon(`campaign ${id}`, async () => {
        const json = await client.get(key);
        if (json === null) return null;
        const record = JSON.parse(json) as CampaignRecord;
        if (!from.includes(record.state)) return null;
        const next: CampaignRecord = { ...record, ...patch, state: to };
        // Listed before the change, so a dialer can never miss a running campaign.
        if (to === 'running' || to === 'paused') await client.sadd(active, id);
        if ((await compareAndSet(client, [key], [json, JSON.stringify(next)])) !== 1) return STALE;
        if (to === 'completed' || to === 'cancelled') await expireCampaign(id);
        return next;
      });
    },

    async activeCampaignIds() {
      return client.smembers(active);
    },

    async settleCampaign(id) {
      const keys = k(id);
      const [json, open] = await Promise.all([client.get(keys.meta), client.hlen(keys.open)]);
      const state = json === null ? null : (JSON.parse(json) as CampaignRecord).state;
      if (state === null || ((state === 'completed' || state === 'cancelled') && open === 0)) {
        await client.srem(active, id);
      }
    },
  };
}
