// The shared event queue on Redis Streams. One consumer group, so several instances drain one
// stream and each entry goes to one consumer; an entry whose consumer died (idle past the lease)
// is taken over with XAUTOCLAIM. Streams have no delayed delivery, so retries wait in a sorted set
// scored by due time and are moved back onto the stream when due. Keys share one hash tag so the
// multi-key steps stay valid on a cluster.
//
//   {queue}:stream   the stream, field `e` = the event as JSON
//   {queue}:delayed  sorted set, member = event JSON, score = due time (ms)
//   {queue}:dead     hash, id → dead letter JSON
//   {queue}:ages     sorted set, member = id, score = enqueued time: depth and oldest age
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { ClaimedEvent, Clock, DeadLetter, EventQueue, QueuedEvent } from '../store.js';
import { redisScript } from './script.js';

const GROUP = 'callbridge';
const PROMOTE_BATCH = 100;
/** XAUTOCLAIM scans at most 10 × COUNT pending entries per call; a few calls cover any real backlog. */
const RECLAIM_SCANS = 10;

const promoteDue = redisScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, member in ipairs(due) do
  redis.call('XADD', KEYS[2], '*', 'e', member)
  redis.call('ZREM', KEYS[1], member)
end
return #due
`);

// HDEL decides which of two concurrent retries of one dead letter wins.
const reviveDead = redisScript(`
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[2], '*', 'e', ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
`);

type StreamEntry = [id: string, fields: string[]];

function readFields(fields: string[]): QueuedEvent | null {
  const at = fields.indexOf('e');
  const json = at >= 0 ? fields[at + 1] : undefined;
  return json === undefined ? null : (JSON.parse(json) as QueuedEvent);
}

/** The stored form: what the stream, the delayed set and the dead hash hold (no receipt). */
function stored(event: QueuedEvent): QueuedEvent {
  const { id, name, provider, idempotencyKey, payload, attempts, enqueuedAtMs, lastError } = event;
  return { id, name, provider, idempotencyKey, payload, attempts, enqueuedAtMs, lastError };
}

export interface RedisEventQueue extends EventQueue {
  /** Creates the consumer group (and stream) if missing. */
  ensureGroup(): Promise<void>;
}

export function redisEventQueue(client: Redis, prefix: string, now: Clock): RedisEventQueue {
  const stream = `${prefix}{queue}:stream`;
  const delayed = `${prefix}{queue}:delayed`;
  const dead = `${prefix}{queue}:dead`;
  const ages = `${prefix}{queue}:ages`;

  async function ensureGroup(): Promise<void> {
    try {
      // From 0, not $: entries added before the group existed are drained too.
      await client.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
  }

  /** Runs `op`, recreating the group once if the stream was deleted under us. */
  async function withGroup<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOGROUP')) throw err;
      await ensureGroup();
      return op();
    }
  }

  async function reclaim(consumer: string, leaseMs: number): Promise<ClaimedEvent | null> {
    let cursor = '0-0';
    for (let scan = 0; scan < RECLAIM_SCANS; scan++) {
      const reply = (await client.xautoclaim(stream, GROUP, consumer, leaseMs, cursor, 'COUNT', 1)) as [
        string,
        StreamEntry[],
        string[]?,
      ];
      const [next, entries] = reply;
      const entry = entries[0];
      if (entry) {
        const event = readFields(entry[1]);
        if (event) {
          // Attempts made by consumers that died count too, so a poison event still ends dead.
          const pending = (await client.xpending(stream, GROUP, entry[0], entry[0], 1)) as [
            string,
            string,
            number,
            number,
          ][];
          const deliveries = pending[0]?.[3] ?? 1;
          return { ...event, attempts: event.attempts + deliveries, receipt: entry[0] };
        }
      }
      if (next === '0-0') return null;
      cursor = next;
    }
    return null;
  }

  async function readNew(consumer: string): Promise<ClaimedEvent | null> {
    const reply = (await client.xreadgroup('GROUP', GROUP, consumer, 'COUNT', 1, 'STREAMS', stream, '>')) as
      [string, StreamEntry[]][] | null;
    const entry = reply?.[0]?.[1]?.[0];
    if (!entry) return null;
    const event = readFields(entry[1]);
    if (!event) {
      await client.multi().xack(stream, GROUP, entry[0]).xdel(stream, entry[0]).exec();
      return null;
    }
    return { ...event, attempts: event.attempts + 1, receipt: entry[0] };
  }

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
      await client
        .multi()
        .xadd(stream, '*', 'e', JSON.stringify(event))
        .zadd(ages, event.enqueuedAtMs, event.id)
        .exec();
      return event.id;
    },

    async claimNextEvent(consumer, leaseMs) {
      await promoteDue(client, [delayed, stream], [now(), PROMOTE_BATCH]);
      return withGroup(async () => (await reclaim(consumer, leaseMs)) ?? readNew(consumer));
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
      const letter: DeadLetter = { ...stored(event), lastError: error, deadAtMs: now() };
      await client
        .multi()
        .xack(stream, GROUP, event.receipt)
        .xdel(stream, event.receipt)
        .hset(dead, event.id, JSON.stringify(letter))
        .zrem(ages, event.id)
        .exec();
    },

    async listDeadLetters(limit) {
      const letters = (await client.hvals(dead)).map((json) => JSON.parse(json) as DeadLetter);
      letters.sort((a, b) => b.deadAtMs - a.deadAtMs);
      return letters.slice(0, limit);
    },

    async retryDeadLetter(id) {
      const json = await client.hget(dead, id);
      if (json === null) return false;
      const { deadAtMs: _deadAt, ...letter } = JSON.parse(json) as DeadLetter;
      const t = now();
      const requeued: QueuedEvent = { ...letter, attempts: 0, enqueuedAtMs: t };
      return (await reviveDead(client, [dead, stream, ages], [id, JSON.stringify(requeued), t])) === 1;
    },

    async queueStats() {
      const replies = await client.multi().zcard(ages).zrange(ages, 0, 0, 'WITHSCORES').hlen(dead).exec();
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
