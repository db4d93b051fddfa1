// The shared event queue on Redis Streams. One consumer group, so several instances drain one
// stream and each entry goes to one consumer; an entry whose consumer died (idle past the lease)
// is taken over with XAUTOCLAIM. Streams have no delayed delivery, so retries wait in a sorted set
// scored by due time and are moved back onto the stream when due. The keys share one hash tag, so
// every multi-key step is one slot on a cluster; each is bounded (keys.ts): the queue refuses events
// past its limit, dead letters are kept for a retention and up to a count, and consumers that have
// gone quiet with nothing pending are dropped from the group.
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { QueueFullError } from '../../errors.js';
import type { StoreLimits } from '../limits.js';
import type { Clock, DeadLetter, EventQueue, QueuedEvent } from '../store.js';
import { consumerGroup, GROUP } from './event-queue-group.js';
import type { RedisKeys } from './keys.js';
import { redisScript } from './script.js';

const PROMOTE_BATCH = 100;
/** Ids dropped per HDEL/ZREM when trimming dead letters (Lua's unpack has a stack limit). */
const TRIM_BATCH = 500;

export interface RedisEventQueueOptions {
  limits: StoreLimits;
  /** A consumer idle this long with nothing pending is dropped from the group (it is re-made if it reads again). */
  consumerIdleMs: number;
  /** How often one instance looks for such consumers. */
  consumerPruneIntervalMs: number;
}

export const DEFAULT_CONSUMER_IDLE_MS = 60 * 60_000;
export const DEFAULT_CONSUMER_PRUNE_INTERVAL_MS = 10 * 60_000;

// KEYS: stream, ages · ARGV: event JSON, id, enqueued ms, limit. 0 when full.
const enqueue = redisScript(`
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'e', ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
`);

// KEYS: delayed, stream · ARGV: now, batch.
const promoteDue = redisScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'e', member)
  redis.call('ZREM', KEYS[1], member)
end
return #due
`);

// KEYS: stream, ages, dead, dead-at · ARGV: group, receipt, id, letter JSON, dead ms, drop-before ms,
// most letters kept, retention ms. Drops the letters past the retention, then the oldest past the count.
const bury = redisScript(`
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[3])
local function drop(ids)
  for i = 1, #ids, ${TRIM_BATCH} do
    local part = {unpack(ids, i, math.min(i + ${TRIM_BATCH} - 1, #ids))}
    redis.call('HDEL', KEYS[3], unpack(part))
    redis.call('ZREM', KEYS[4], unpack(part))
  end
end
drop(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. ARGV[6]))
local excess = redis.call('ZCARD', KEYS[4]) - tonumber(ARGV[7])
if excess > 0 then drop(redis.call('ZRANGE', KEYS[4], 0, excess - 1)) end
redis.call('PEXPIRE', KEYS[3], ARGV[8])
redis.call('PEXPIRE', KEYS[4], ARGV[8])
return 1
`);

// KEYS: dead, dead-at, stream, ages · ARGV: id, requeued JSON, now, limit. HDEL decides which of two
// concurrent retries of one dead letter wins. 1 requeued, 0 no such letter, -1 the queue is full.
const revive = redisScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[4]) then return -1 end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('XADD', KEYS[3], '*', 'e', ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
return 1
`);

/** The stored form: what the stream, the delayed set and the dead hash hold (no receipt). */
function stored(event: QueuedEvent): QueuedEvent {
  const { id, name, provider, idempotencyKey, payload, attempts, enqueuedAtMs, lastError } = event;
  return { id, name, provider, idempotencyKey, payload, attempts, enqueuedAtMs, lastError };
}

export interface RedisEventQueue extends EventQueue {
  /** Creates the consumer group (and stream) if missing. */
  ensureGroup(): Promise<void>;
}

export function redisEventQueue(
  client: Redis,
  keys: RedisKeys,
  now: Clock,
  options: RedisEventQueueOptions,
): RedisEventQueue {
  const { stream, delayed, ages, dead, deadAt } = keys.queue;
  const { limits } = options;
  const { ensureGroup, withGroup, pruneConsumers, reclaim, readNew } = consumerGroup(
    client,
    stream,
    now,
    options,
  );

  const queueFull = () =>
    new QueueFullError(`the event queue holds its limit of ${limits.maxQueuedEvents} events; retry later`);

  return {
    ensureGroup,

    async enqueueEvent(input) {
      const event: QueuedEvent = {
        id: randomUUID(),
        name: input.name,
        provider: input.provider,
        idempotencyKey: input.idempotencyKey,
        payload: input.payload ?? null,
        attempts: 0,
        enqueuedAtMs: now(),
        lastError: null,
      };
      const args = [JSON.stringify(event), event.id, event.enqueuedAtMs, limits.maxQueuedEvents];
      if ((await enqueue(client, [stream, ages], args)) !== 1) throw queueFull();
      return event.id;
    },

    async claimNextEvent(consumer, leaseMs) {
      await promoteDue(client, [delayed, stream], [now(), PROMOTE_BATCH]);
      return withGroup(async () => {
        await pruneConsumers(consumer);
        return (await reclaim(consumer, leaseMs)) ?? readNew(consumer);
      });
    },

    async ackEvent(event) {
      await client
        .multi()
        .xack(stream, GROUP, event.receipt)
        .xdel(stream, event.receipt)
        .zrem(ages, event.id)
        .exec();
    },

    async retryEventLater(event, delayMs, error) {
      const member = JSON.stringify({ ...stored(event), lastError: error });
      await client
        .multi()
        .xack(stream, GROUP, event.receipt)
        .xdel(stream, event.receipt)
        .zadd(delayed, now() + delayMs, member)
        .exec();
    },

    async deadLetterEvent(event, error) {
      const t = now();
      const letter: DeadLetter = { ...stored(event), lastError: error, deadAtMs: t };
      await bury(
        client,
        [stream, ages, dead, deadAt],
        [
          GROUP,
          event.receipt,
          event.id,
          JSON.stringify(letter),
          t,
          t - limits.deadLetterRetentionMs,
          limits.maxDeadLetters,
          limits.deadLetterRetentionMs,
        ],
      );
    },

    async listDeadLetters(limit) {
      // Letters past the retention stay until the next dead letter trims them: skip them here.
      const ids = await client.zrevrangebyscore(
        deadAt,
        '+inf',
        now() - limits.deadLetterRetentionMs,
        'LIMIT',
        0,
        limit,
      );
      if (ids.length === 0) return [];
      const jsons = await client.hmget(dead, ...ids);
      return jsons.filter((json) => json !== null).map((json) => JSON.parse(json) as DeadLetter);
    },

    async retryDeadLetter(id) {
      const json = await client.hget(dead, id);
      if (json === null) return false;
      const { deadAtMs: _deadAt, ...letter } = JSON.parse(json) as DeadLetter;
      const t = now();
      const requeued: QueuedEvent = { ...letter, attempts: 0, enqueuedAtMs: t };
      const args = [id, JSON.stringify(requeued), t, limits.maxQueuedEvents];
      const result = await revive(client, [dead, deadAt, stream, ages], args);
      if (result === -1) throw queueFull();
      return result === 1;
    },

    async queueStats() {
      const replies = await client
        .multi()
        .zcard(ages)
        .zrange(ages, 0, 0, 'WITHSCORES')
        .zcount(deadAt, now() - limits.deadLetterRetentionMs, '+inf')
        .exec();
      const depth = Number(replies?.[0]?.[1] ?? 0);
      const oldest = replies?.[1]?.[1] as string[] | undefined;
      const oldestMs = oldest?.[1] === undefined ? null : Number(oldest[1]);
      return {
        depth,
        oldestAgeMs: oldestMs === null ? null : Math.max(0, now() - oldestMs),
        deadLetters: Number(replies?.[2]?.[1] ?? 0),
      };
    },
  };
}
