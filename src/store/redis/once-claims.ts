// Single-use claims (stream tokens) in Redis: SET NX with an expiry of the validity plus the
// clock-skew allowance (limits.ts). Redis counts the expiry on its own clock, from the claim.
import type { Redis } from 'ioredis';
import type { OnceClaims } from '../store.js';
import type { RedisKeys } from './keys.js';

export function redisOnceClaims(client: Redis, keys: RedisKeys, clockSkewAllowanceMs: number): OnceClaims {
  return {
    async claimOnce(key, validForMs) {
      const ttlMs = validForMs + clockSkewAllowanceMs;
      return (await client.set(keys.once(key), '1', 'PX', ttlMs, 'NX')) === 'OK';
    },
  };
}
