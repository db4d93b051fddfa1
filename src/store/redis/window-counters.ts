// Counters over a window opened by the first hit, in Redis: the key's expiry is the window.
import type { Redis } from 'ioredis';
import type { Clock, WindowCounters } from '../store.js';
import type { RedisKeys } from './keys.js';

export function redisWindowCounters(client: Redis, keys: RedisKeys, now: Clock): WindowCounters {
  const keyOf = keys.counter;
  return {
    async incrementWindowCounter(key, windowMs) {
      const k = keyOf(key);
      // SET NX opens the window with its expiry; INCR keeps the expiry. One transaction, so a crash
      // can never leave a counter without one.
      const replies = await client.multi().set(k, '0', 'PX', windowMs, 'NX').incr(k).pttl(k).exec();
      const count = Number(replies?.[1]?.[1]);
      const ttlMs = Number(replies?.[2]?.[1]);
      return { count, resetAtMs: now() + Math.max(0, ttlMs) };
    },
    async readWindowCounter(key) {
      const k = keyOf(key);
      const replies = await client.multi().get(k).pttl(k).exec();
      const value = replies?.[0]?.[1];
      const ttlMs = Number(replies?.[1]?.[1]);
      if (typeof value !== 'string' || ttlMs <= 0) return null;
      return { count: Number(value), resetAtMs: now() + ttlMs };
    },
  };
}
