// Last verified delivery per webhook provider, in one Redis hash: one field per provider, and the
// hash expires a long while after its last write (keys.ts).
import type { Redis } from 'ioredis';
import type { ProviderVerifications } from '../store.js';
import { PROVIDER_VERIFIED_RETENTION_MS, type RedisKeys } from './keys.js';
import { redisScript } from './script.js';

// Keeps the latest time: instances may report out of order.
const markLatest = redisScript(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (not current) or tonumber(current) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

export function redisProviderVerifications(client: Redis, keys: RedisKeys): ProviderVerifications {
  const key = keys.providerVerified;
  return {
    async markProviderVerified(provider, atMs) {
      await markLatest(client, [key], [provider, atMs, PROVIDER_VERIFIED_RETENTION_MS]);
    },
    async providerVerifiedTimes() {
      const all = await client.hgetall(key);
      return Object.fromEntries(Object.entries(all).map(([provider, ms]) => [provider, Number(ms)]));
    },
  };
}
