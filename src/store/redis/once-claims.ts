// Single-use claims (stream tokens) in Redis: SET NX with an expiry.
import type { Redis } from 'ioredis';
import type { OnceClaims } from '../store.js';

export function redisOnceClaims(client: Redis, prefix: string): OnceClaims {
  return {
    async claimOnce(key, ttlMs) {
      return (await client.set(`${prefix}once:${key}`, '1', 'PX', ttlMs, 'NX')) === 'OK';
    },
  };
}
