// Every Redis connection the server opens (the store's, the fleet's two, the doctor's probe) is made
// here, each stating the few choices that differ: how long a command may wait for its reply, how
// often it is retried, whether it waits out a disconnection, and how the connection comes back.
// Connections are lazy: the caller awaits `connect()` and so sees a Redis that is not there.
import { Redis, type RedisOptions } from 'ioredis';

export interface RedisClientOptions {
  connectTimeoutMs: number;
  /** How long one command may wait for its reply; null: no deadline (a subscriber's quiet connection). */
  commandTimeoutMs: number | null;
  /** How often a command is retried across reconnections; null: until it succeeds. */
  retriesPerRequest: number | null;
  /** Whether commands sent while disconnected wait for the connection or fail at once. */
  queueWhileOffline: boolean;
  /**
   * Reconnecting: back off by 100 ms an attempt up to this many milliseconds; null: never reconnect;
   * absent: ioredis's own back-off.
   */
  maxReconnectDelayMs?: number | null;
  /** Connection errors; by default they surface only through the commands that fail. */
  onError?: (err: Error) => void;
}

const RECONNECT_STEP_MS = 100;

function reconnecting(maxDelayMs: number | null | undefined): Pick<RedisOptions, 'retryStrategy'> {
  if (maxDelayMs === undefined) return {};
  if (maxDelayMs === null) return { retryStrategy: () => null };
  return { retryStrategy: (attempt: number) => Math.min(attempt * RECONNECT_STEP_MS, maxDelayMs) };
}

export function createRedisClient(url: string, options: RedisClientOptions): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs,
    ...(options.commandTimeoutMs === null ? {} : { commandTimeout: options.commandTimeoutMs }),
    maxRetriesPerRequest: options.retriesPerRequest,
    enableOfflineQueue: options.queueWhileOffline,
    ...reconnecting(options.maxReconnectDelayMs),
  });
  client.on('error', options.onError ?? (() => {}));
  return client;
}
