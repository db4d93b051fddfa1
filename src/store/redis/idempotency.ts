// Idempotency keys of webhook deliveries in Redis. Value `p:<token>` while in progress, `done` once
// committed; Redis expiry is the TTL of both states. Claims and commits of one burst of deliveries
// go to Redis in one pipeline (script-batch.ts).
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { IdempotencyKeys } from '../store.js';
import type { RedisKeys } from './keys.js';
import { scriptBatch } from './script-batch.js';
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

export function redisIdempotencyKeys(client: Redis, keys: RedisKeys): IdempotencyKeys {
  const keyOf = keys.idempotency;
  const batched = scriptBatch(client);
  return {
    async claimIdempotencyKey(key, ttlMs) {
      const token = randomUUID();
      let status: unknown;
      try {
        status = await batched(claim, [keyOf(key)], [token, ttlMs]);
      } catch (err) {
        // A command that timed out may still run: a Redis that froze runs what it was sent once it
        // thaws. The release, queued behind the claim on the same connection, undoes it, so the
        // provider's retry is not told "in progress" for the claim's whole lifetime.
        release(client, [keyOf(key)], [token]).catch(() => {});
        throw err;
      }
      if (status === 'claimed') return { status: 'claimed', token };
      return status === 'done' ? { status: 'done' } : { status: 'in_progress' };
    },
    async commitIdempotencyKey(key, token, ttlMs) {
      await batched(commit, [keyOf(key)], [token, ttlMs]);
    },
    async releaseIdempotencyKey(key, token) {
      await release(client, [keyOf(key)], [token]);
    },
  };
}
