// The Redis store: shared by every instance pointed at one REDIS_URL, so idempotency keys, limiter
// counters and the queue hold across instances. Every key starts with `keyPrefix`.
import { Redis } from 'ioredis';
import { DEFAULT_CALL_RECORD_RETENTION_MS } from './call-record-query.js';
import { redisCallRecords } from './redis/call-records.js';
import { redisCampaigns } from './redis/campaigns.js';
import { redisDialerHeartbeats } from './redis/dialer-heartbeats.js';
import { redisDoNotCall } from './redis/do-not-call.js';
import { redisEventQueue } from './redis/event-queue.js';
import { redisIdempotencyKeys } from './redis/idempotency.js';
import { redisOnceClaims } from './redis/once-claims.js';
import { redisProviderVerifications } from './redis/provider-verifications.js';
import { redisWindowCounters } from './redis/window-counters.js';
import type { Clock, Store } from './store.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'callbridge:';
const CONNECT_TIMEOUT_MS = 5_000;

export interface RedisStoreOptions {
  url: string;
  keyPrefix?: string;
  now?: Clock;
  /** How long call records are kept, counted from their start; 90 days by default. */
  callRecordRetentionMs?: number;
}

export async function openRedisStore(options: RedisStoreOptions): Promise<Store> {
  const now = options.now ?? Date.now;
  const prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const client = new Redis(options.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Fail a command instead of queueing it forever while Redis is away: callers answer 503.
    maxRetriesPerRequest: 2,
  });
  // A connection error after start is logged by the caller's command failures, not thrown here.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw err;
  }

  const queue = redisEventQueue(client, prefix, now);
  await queue.ensureGroup();
  const { ensureGroup: _ensureGroup, ...eventQueue } = queue;

  return {
    ...redisOnceClaims(client, prefix),
    ...redisIdempotencyKeys(client, prefix),
    ...redisWindowCounters(client, prefix, now),
    ...eventQueue,
    ...redisProviderVerifications(client, prefix),
    ...redisCallRecords(
      client,
      prefix,
      now,
      options.callRecordRetentionMs ?? DEFAULT_CALL_RECORD_RETENTION_MS,
    ),
    ...redisCampaigns(client, prefix),
    ...redisDialerHeartbeats(client, prefix),
    ...redisDoNotCall(client, prefix),
    async close() {
      if (client.status === 'end') return;
      try {
        await client.quit();
      } catch {
        client.disconnect();
      }
    },
  };
}
