// Outbound calls' contexts in Redis: one key per context, expiring with it (keys.ts).
import type { Redis } from 'ioredis';
import type { OutboundContextRecords } from '../store.js';
import type { RedisKeys } from './keys.js';

export function redisOutboundContexts(client: Redis, keys: RedisKeys): OutboundContextRecords {
  return {
    async putOutboundContext(id, value, ttlMs) {
      await client.set(keys.outboundContext(id), value, 'PX', Math.max(1, Math.ceil(ttlMs)));
    },
    async getOutboundContext(id) {
      return client.get(keys.outboundContext(id));
    },
  };
}
