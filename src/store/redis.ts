// The Redis store: shared by every instance pointed at one REDIS_URL, so idempotency keys, limiter
// counters and the queue hold across instances. Every key starts with `keyPrefix`; the layout,
// and what bounds each key, is in redis/keys.ts.
import { DEFAULT_CALL_RECORD_RETENTION_MS } from './call-record-query.js';
import { createRedisClient } from './redis-client.js';
import { redisAccess } from './redis/access.js';
import { redisAnalysisJobs } from './redis/analysis-jobs.js';
import { type StoreLimits, storeLimits } from './limits.js';
import { redisCallRecords } from './redis/call-records.js';
import {
  DEFAULT_CONSUMER_IDLE_MS,
  DEFAULT_CONSUMER_PRUNE_INTERVAL_MS,
  redisEventQueue,
} from './redis/event-queue.js';
import { redisCampaigns } from './redis/campaigns.js';
import { redisDialerHeartbeats } from './redis/dialer-heartbeats.js';
import { redisDoNotCall } from './redis/do-not-call.js';
import { redisIdempotencyKeys } from './redis/idempotency.js';
import { redisKeys } from './redis/keys.js';
import { upgradeLegacyLayout } from './redis/legacy-layout.js';
import { redisOnceClaims } from './redis/once-claims.js';
import { redisOutboundContexts } from './redis/outbound-contexts.js';
import { redisProviderVerifications } from './redis/provider-verifications.js';
import { redisWindowCounters } from './redis/window-counters.js';
import type { Clock, Store } from './store.js';

export const DEFAULT_REDIS_KEY_PREFIX = 'callbridge:';
const CONNECT_TIMEOUT_MS = 5_000;
/**
 * How long one command may wait for its reply. A Redis that stopped answering without closing the
 * connection (frozen, or cut off by the network) would otherwise hold every caller forever; with
 * it, callers fail fast and answer 503 until Redis is back.
 */
export const DEFAULT_REDIS_COMMAND_TIMEOUT_MS = 2_000;

export interface RedisStoreOptions {
  url: string;
  keyPrefix?: string;
  now?: Clock;
  /** How long call records are kept, counted from their start; 90 days by default. */
  callRecordRetentionMs?: number;
  limits?: Partial<StoreLimits>;
  commandTimeoutMs?: number;
  /** Queue consumers idle this long with nothing pending are dropped from the group. */
  consumerIdleMs?: number;
}

export async function openRedisStore(options: RedisStoreOptions): Promise<Store> {
  const now = options.now ?? Date.now;
  const prefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
  const keys = redisKeys(prefix);
  const limits = storeLimits(options.limits);
  // A connection error after start is logged by the caller's command failures, not thrown here.
  const client = createRedisClient(options.url, {
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_REDIS_COMMAND_TIMEOUT_MS,
    // Fail a command instead of queueing it forever while Redis is away: callers answer 503.
    retriesPerRequest: 2,
    queueWhileOffline: true,
  });
  try {
    await client.connect();
  } catch (err) {
    client.disconnect();
    throw err;
  }

  const callRecords = redisCallRecords(
    client,
    keys,
    now,
    options.callRecordRetentionMs ?? DEFAULT_CALL_RECORD_RETENTION_MS,
  );
  const queue = redisEventQueue(client, keys, now, {
    limits,
    consumerIdleMs: options.consumerIdleMs ?? DEFAULT_CONSUMER_IDLE_MS,
    consumerPruneIntervalMs: Math.min(DEFAULT_CONSUMER_PRUNE_INTERVAL_MS, options.consumerIdleMs ?? Infinity),
  });
  try {
    await queue.ensureGroup();
    await upgradeLegacyLayout(client, prefix, keys, callRecords, limits);
  } catch (err) {
    client.disconnect();
    throw err;
  }
  const { ensureGroup: _ensureGroup, ...eventQueue } = queue;

  return {
    ...redisOnceClaims(client, keys, limits.clockSkewAllowanceMs),
    ...redisOutboundContexts(client, keys),
    ...redisIdempotencyKeys(client, keys),
    ...redisWindowCounters(client, keys, now),
    ...eventQueue,
    ...redisProviderVerifications(client, keys),
    ...callRecords,
    ...redisAnalysisJobs(client, prefix, now),
    ...redisCampaigns(client, prefix),
    ...redisDialerHeartbeats(client, prefix),
    ...redisDoNotCall(client, prefix),
    ...redisAccess(client, prefix, now),
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
