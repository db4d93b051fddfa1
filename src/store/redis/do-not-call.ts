// The do-not-call list in Redis: one small key per number (spread over the cluster, no hash tag),
// holding when it was added, and `dnc-index`, the numbers in lexical order for listing. Listed
// numbers stay until removed.
import type { Redis } from 'ioredis';
import type { DoNotCallEntry, DoNotCallList } from '../campaign-store.js';

/** Index members read per listing at most: a search over a huge list answers in bounded time. */
const MAX_SCANNED = 20_000;
const BATCH = 1_000;

export function redisDoNotCall(client: Redis, prefix: string): DoNotCallList {
  const key = (number: string) => `${prefix}dnc:${number}`;
  const index = `${prefix}dnc-index`;
  return {
    async addDoNotCall(numbers, nowMs) {
      if (numbers.length === 0) return 0;
      const pipeline = client.pipeline();
      for (const number of numbers) pipeline.set(key(number), String(nowMs), 'NX');
      const replies = (await pipeline.exec()) ?? [];
      for (const [err] of replies) if (err) throw err;
      await client.zadd(index, ...numbers.flatMap((number) => [0, number]));
      return replies.filter(([, reply]) => reply === 'OK').length;
    },
    async getDoNotCall(number) {
      const value = await client.get(key(number));
      return value === null ? null : { number, addedAtMs: Number(value) };
    },
    async removeDoNotCall(number) {
      await client.zrem(index, number);
      return (await client.del(key(number))) === 1;
    },
    async listDoNotCall(query) {
      const found: string[] = [];
      let from = query.cursor === undefined ? '-' : `(${query.cursor}`;
      let scanned = 0;
      let last: string | null = null;
      while (found.length <= query.limit && scanned < MAX_SCANNED) {
        const members = await client.zrangebylex(index, from, '+', 'LIMIT', 0, BATCH);
        scanned += members.length;
        for (const number of members) {
          last = number;
          if (query.q !== undefined && !number.includes(query.q)) continue;
          found.push(number);
          if (found.length > query.limit) break;
        }
        if (members.length < BATCH) break;
        from = `(${members.at(-1)}`;
      }
      const page = found.slice(0, query.limit);
      const values = page.length === 0 ? [] : await Promise.all(page.map((n) => client.get(key(n))));
      const numbers: DoNotCallEntry[] = [];
      page.forEach((number, i) => {
        const value = values[i];
        if (value !== null && value !== undefined) numbers.push({ number, addedAtMs: Number(value) });
      });
      if (found.length > query.limit) return { numbers, nextCursor: page.at(-1)! };
      // Out of budget: every number up to the last one read has been considered.
      return { numbers, nextCursor: scanned >= MAX_SCANNED ? last : null };
    },
  };
}
