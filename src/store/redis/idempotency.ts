// Idempotency keys of webhook deliveries in Redis. Value `p:<token>` while in progress, `done` once
// committed; Redis expiry is the TTL of both states.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { IdempotencyKeys } from '../store.js';
import { redisScript } from './script.js';

const claim = redisScript(`
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'p:' .. ARGV[1], 'PX', ARGV[2])
  return 'claimed'
end
if v == 'done' then return 'done' end
return 'in_progress'
`);

// Commits its own claim, or a key whose claim lapsed meanwhile; never another live claimant's.
const commit = redisScript(`
local v = redis.call('GET', KEYS[1])
if (not v) or v == 'p:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2])
end
return 1
`);

const release = redisScript(`
if redis.call('GET', KEYS[1]) == 'p:' .. ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

export function redisIdempotencyKeys(client: Redis, prefix: string): IdempotencyKeys {
  const keyOf = (key: string) => `${prefix}idem:${key}`;
  return {
    async claimIdempotencyKey(key, ttlMs) {
      const token = randomUUID();
      const status = await claim(client, [keyOf(key)], [token, ttlMs]);
      if (status === 'claimed') return { status: 'claimed', token };
      return status === 'done' ? { status: 'done' } : { status: 'in_progress' };
    },
    async commitIdempotencyKey(key, token, ttlMs) {
      await commit(client, [keyOf(key)], [token, ttlMs]);
    },
    async releaseIdempotencyKey(key, token) {
      await release(client, [keyOf(key)], [token]);
    },
  };
}
