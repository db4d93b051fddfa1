// The event queue's consumer group on its Redis stream: creating it, taking over entries whose
// consumer died (XAUTOCLAIM past the lease), reading new entries, and dropping consumers that have
// gone quiet with nothing pending. event-queue.ts builds the queue's operations on these.
import type { Redis } from 'ioredis';
import type { ClaimedEvent, Clock, QueuedEvent } from '../store.js';

export const GROUP = 'callbridge';
/** XAUTOCLAIM scans at most 10 × COUNT pending entries per call; a few calls cover any real backlog. */
const RECLAIM_SCANS = 10;

type StreamEntry = [id: string, fields: string[]];

function readFields(fields: string[]): QueuedEvent | null {
  const at = fields.indexOf('e');
  const json = at >= 0 ? fields[at + 1] : undefined;
  return json === undefined ? null : (JSON.parse(json) as QueuedEvent);
}

/** XINFO CONSUMERS replies a flat [field, value, …] list per consumer. */
function consumerInfo(reply: unknown): Array<{ name: string; pending: number; idleMs: number }> {
  if (!Array.isArray(reply)) return [];
  return reply.map((fields: unknown[]) => {
    const get = (field: string) => fields[fields.indexOf(field) + 1];
    return { name: String(get('name')), pending: Number(get('pending')), idleMs: Number(get('idle')) };
  });
}

export interface ConsumerGroupOptions {
  /** A consumer idle this long with nothing pending is dropped from the group. */
  consumerIdleMs: number;
  /** How often one instance looks for such consumers. */
  consumerPruneIntervalMs: number;
}

export interface ConsumerGroup {
  /** Creates the consumer group (and stream) if missing. */
  ensureGroup(): Promise<void>;
  /** Runs `op`, recreating the group once if the stream was deleted under us. */
  withGroup<T>(op: () => Promise<T>): Promise<T>;
  /** Drops consumers idle past the limit with nothing pending, at most once per interval. */
  pruneConsumers(self: string): Promise<void>;
  /** Takes over one entry whose consumer held it past the lease, or null. */
  reclaim(consumer: string, leaseMs: number): Promise<ClaimedEvent | null>;
  /** Reads one entry no consumer has seen, or null. */
  readNew(consumer: string): Promise<ClaimedEvent | null>;
}

export function consumerGroup(
  client: Redis,
  stream: string,
  now: Clock,
  options: ConsumerGroupOptions,
): ConsumerGroup {
  let prunedAtMs = Number.NEGATIVE_INFINITY;

  async function ensureGroup(): Promise<void> {
    try {
      // From 0, not $: entries added before the group existed are drained too.
      await client.xgroup('CREATE', stream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('BUSYGROUP')) throw err;
    }
  }

  async function withGroup<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOGROUP')) throw err;
      await ensureGroup();
      return op();
    }
  }

  /**
   * Every process start names a new consumer, so over years the group would collect thousands.
   * A consumer idle past consumerIdleMs with nothing pending has gone (a live one polls every
   * second); dropping it loses nothing, and it is re-made should it read again.
   */
  async function pruneConsumers(self: string): Promise<void> {
    const t = now();
    if (t - prunedAtMs < options.consumerPruneIntervalMs) return;
    prunedAtMs = t;
    const consumers = consumerInfo(await client.xinfo('CONSUMERS', stream, GROUP));
    for (const consumer of consumers) {
      if (consumer.name === self || consumer.pending > 0 || consumer.idleMs < options.consumerIdleMs)
        continue;
      await client.xgroup('DELCONSUMER', stream, GROUP, consumer.name);
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

  return { ensureGroup, withGroup, pruneConsumers, reclaim, readNew };
}
