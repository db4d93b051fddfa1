// Which dialer processes are alive, in Redis: one key per process, expiring when its heartbeat lapses.
import type { Redis } from 'ioredis';
import type { DialerHeartbeats } from '../campaign-store.js';

export function redisDialerHeartbeats(client: Redis, prefix: string): DialerHeartbeats {
  const key = (owner: string) => `${prefix}dialer:${owner}`;
  return {
    async beatDialer(owner, ttlMs) {
      await client.set(key(owner), '1', 'PX', ttlMs);
    },
    async liveDialers(owners) {
      if (owners.length === 0) return new Set();
      const values = await client.mget(owners.map(key));
      return new Set(owners.filter((_, i) => values[i] !== null));
    },
  };
}
