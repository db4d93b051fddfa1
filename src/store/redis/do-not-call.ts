// The do-not-call list in Redis: one small key per number (spread over the cluster, no hash tag),
// holding when it was added. Listed numbers stay until removed.
import type { Redis } from 'ioredis';
import type { DoNotCallList } from '../campaign-store.js';

export function redisDoNotCall(client: Redis, prefix: string): DoNotCallList {
  const key = (number: string) => `${prefix}dnc:${number}`;
  return {
    async addDoNotCall(numbers, nowMs) {
      if (numbers.length === 0) return 0;
      const pipeline = client.pipeline();
      for (const number of numbers) pipeline.set(key(number), String(nowMs), 'NX');
      const replies = (await pipeline.exec()) ?? [];
      for (const [err] of replies) if (err) throw err;
      return replies.filter(([, reply]) => reply === 'OK').length;
    },
    async getDoNotCall(number) {
      const value = await client.get(key(number));
      return value === null ? null : { number, addedAtMs: Number(value) };
    },
    async removeDoNotCall(number) {
      return (await client.del(key(number))) === 1;
    },
  };
}
