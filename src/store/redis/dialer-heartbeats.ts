// Which dialer processes are alive, in Redis: one key per process holding when its heartbeat lapses
// on the dialer's clock, and expiring a little after that on Redis's.
import type { Redis } from 'ioredis';
import type { DialerHeartbeats } from '../campaign-store.js';

export function redisDialerHeartbeats(client: Redis, prefix: string): DialerHeartbeats {
  const key = (owner: string) => `${prefix}dialer:${owner}`;
  return {
    async beatDialer(owner, nowMs, ttlMs) {
      await client.set(key(owner), String(nowMs + ttlMs), 'PX', ttlMs);
    },
    async liveDialers(owners, nowMs) {
      if (owners.length === 0) return new Set();
      const values = await client.mget(owners.map(key));
      return new Set(owners.filter((_, i) => values[i] != null && Number(values[i]) > nowMs));
    },
  };
}
