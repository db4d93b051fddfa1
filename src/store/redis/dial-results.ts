// The breaker's window in Redis: a campaign's finished attempts, and the failed ones among them,
// by end time, trimmed to what the breaker still looks at.
import { type DialResults } from '../campaign-store.js';
import { type CampaignContext } from './campaign-context.js';

/** The breaker's window holds at most this many results, however fast the campaign dials. */
const MAX_RESULTS = 100_000;

export function redisDialResults(ctx: CampaignContext): DialResults {
  const { client, k } = ctx;
  return {
    async recordDialResult(id, result, keepMs) {
      const keys = k(id);
      const oldest = result.atMs - keepMs;
      const tx = client.multi().zadd(keys.results, result.atMs, result.id);
      if (result.failed) tx.zadd(keys.failures, result.atMs, result.id);
      await tx
        .zremrangebyscore(keys.results, '-inf', `(${oldest}`)
        .zremrangebyscore(keys.failures, '-inf', `(${oldest}`)
        .zremrangebyrank(keys.results, 0, -MAX_RESULTS - 1)
        .zremrangebyrank(keys.failures, 0, -MAX_RESULTS - 1)
        .exec();
    },

    async dialResultCounts(id, sinceMs) {
      const keys = k(id);
      const replies =
        (await client
          .multi()
          .zcount(keys.results, sinceMs, '+inf')
          .zcount(keys.failures, sinceMs, '+inf')
          .exec()) ?? [];
      return { calls: Number(replies[0]?.[1] ?? 0), failures: Number(replies[1]?.[1] ?? 0) };
    },
  };
}
