// The fleet's two Redis connections: one for commands (heartbeats, listings, publishing) and one
// held in subscribe mode for this instance's inbox and the event feeds observers here follow.
// While Redis is away both reconnect on their own; commands fail at once instead of queueing, so a
// heartbeat or a relayed event never waits on an outage, and a live call never notices one.
import type { Redis } from 'ioredis';
import { createRedisClient } from '../store/redis-client.js';

const CONNECT_TIMEOUT_MS = 5_000;
const COMMAND_TIMEOUT_MS = 2_000;
/** Reconnect attempts back off to this; an outage ends within a second of Redis answering again. */
const MAX_RECONNECT_DELAY_MS = 1_000;

export interface FleetRedis {
  commands: Redis;
  subscriber: Redis;
  close(): Promise<void>;
}

function client(url: string, subscriber: boolean): Redis {
  // Failures surface through the commands that fail; the connection itself keeps retrying.
  return createRedisClient(url, {
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    // A subscriber's connection is quiet by design; only commands get a reply deadline.
    commandTimeoutMs: subscriber ? null : COMMAND_TIMEOUT_MS,
    retriesPerRequest: subscriber ? null : 0,
    queueWhileOffline: subscriber,
    maxReconnectDelayMs: MAX_RECONNECT_DELAY_MS,
  });
}

export async function connectFleetRedis(url: string): Promise<FleetRedis> {
  const commands = client(url, false);
  const subscriber = client(url, true);
  try {
    await Promise.all([commands.connect(), subscriber.connect()]);
  } catch (err) {
    commands.disconnect();
    subscriber.disconnect();
    throw err;
  }
  return {
    commands,
    subscriber,
    async close() {
      await Promise.all(
        [commands, subscriber].map(async (redis) => {
          if (redis.status === 'end') return;
          try {
            await redis.quit();
          } catch {
            redis.disconnect();
          }
        }),
      );
    },
  };
}
