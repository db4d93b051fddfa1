// Finding the test Redis, and removing a test run's keys from it.
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisAvailable(url = REDIS_URL): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export async function deleteKeys(prefix: string, url = REDIS_URL): Promise<void> {
  const client = new Redis(url);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      // One key per DEL: on a cluster-mode server a DEL of keys in several slots is refused.
      await Promise.all(keys.map((key) => client.del(key)));
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await client.quit();
  }
}
