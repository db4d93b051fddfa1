// The one maker of Redis connections (src/store/redis-client.ts) keeps each choice it is given:
// a command's reply deadline, failing at once or waiting out an outage, and reconnecting or not.
// Against a throwaway redis-server of the test's own, which the tests freeze, kill and restart.
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisClient } from '../../src/store/redis-client.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../helpers/redis-server.js';

const servers: RedisServer[] = [];
const clients: Redis[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  for (const server of servers.splice(0)) {
    server.thaw();
    await server.stop();
  }
});

async function server(): Promise<RedisServer> {
  const started = await startRedisServer();
  servers.push(started);
  return started;
}

function client(url: string, options: Parameters<typeof createRedisClient>[1]): Redis {
  const made = createRedisClient(url, options);
  clients.push(made);
  return made;
}

describe.skipIf(!REDIS_SERVER)('createRedisClient', () => {
  it('fails a command at its deadline when Redis stops answering', async () => {
    const redis = await server();
    const made = client(redis.url, {
      connectTimeoutMs: 2_000,
      commandTimeoutMs: 300,
      retriesPerRequest: 0,
      queueWhileOffline: false,
    });
    await made.connect();
    expect(await made.ping()).toBe('PONG');
    redis.freeze();
    const startedAt = performance.now();
    await expect(made.ping()).rejects.toThrow(/timed out/i);
    expect(performance.now() - startedAt).toBeLessThan(2_000);
  });

  it('without reconnection or an offline queue, fails at once once Redis is gone, and reports why', async () => {
    const redis = await server();
    const errors: Error[] = [];
    const made = client(redis.url, {
      connectTimeoutMs: 2_000,
      commandTimeoutMs: null,
      retriesPerRequest: 0,
      queueWhileOffline: false,
      maxReconnectDelayMs: null,
      onError: (err) => errors.push(err),
    });
    await made.connect();
    const ended = new Promise<void>((resolve) => made.once('end', resolve));
    await redis.kill();
    await ended;
    const startedAt = performance.now();
    await expect(made.ping()).rejects.toThrow();
    expect(performance.now() - startedAt).toBeLessThan(500);
    expect(made.status).toBe('end');
    // A fresh one to a port nothing listens on: the socket's error reaches onError.
    const refused = client('redis://127.0.0.1:9', {
      connectTimeoutMs: 2_000,
      commandTimeoutMs: null,
      retriesPerRequest: 0,
      queueWhileOffline: false,
      maxReconnectDelayMs: null,
      onError: (err) => errors.push(err),
    });
    await expect(refused.connect()).rejects.toThrow();
    expect(errors.map((err) => (err as NodeJS.ErrnoException).code)).toContain('ECONNREFUSED');
  });

  it('waits out an outage when asked to: reconnects with its back-off and runs the queued command', async () => {
    const redis = await server();
    const made = client(redis.url, {
      connectTimeoutMs: 2_000,
      commandTimeoutMs: null,
      retriesPerRequest: null,
      queueWhileOffline: true,
      maxReconnectDelayMs: 200,
    });
    await made.connect();
    await redis.kill();
    const queued = made.ping();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await redis.restart();
    expect(await queued).toBe('PONG');
  });
});
