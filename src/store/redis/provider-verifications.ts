// Last verified delivery per webhook provider, in one Redis hash.
import type { Redis } from 'ioredis';
import type { ProviderVerifications } from '../store.js';
import { redisScript } from './script.js';

// Keeps the latest time: instances may report out of order.
const markLatest = redisScript(`
local current = redis.call('HGET', KEYS[1], ARGV[1])
if (not current) or tonumber(current) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
return 1
`);

export function redisProviderVerifications(client: Redis, prefix: string): ProviderVerifications {
  const key = `${prefix}provider-verified`;
  return {
    async markProviderVerified(provider, atMs) {
      await markLatest(client, [key], [provider, atMs]);
    },
    async providerVerifiedTimes() {
      const all = await client.hgetall(key);
      return Object.fromEntries(Object.entries(all).map(([provider, ms]) => [provider, Number(ms)]));
    },
  };
}
