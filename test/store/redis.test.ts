// The Redis adapter against the store contract. Needs a Redis at REDIS_URL (default
// redis://127.0.0.1:6379); skipped, saying why, when none answers. Every run uses its own key
// prefix and deletes its keys afterwards, so parallel runs never meet.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { campaignStoreContract } from './campaign-contract.js';
import { storeContract } from './contract.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';

const available = await redisAvailable();
if (!available) console.warn(`skipping the Redis store suites: no Redis answers at ${REDIS_URL}`);

describe.skipIf(!available)('redis', () => {
  const redisHarness = async () => {
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    return {
      open: () => openRedisStore({ url: REDIS_URL, keyPrefix }),
      cleanup: () => deleteKeys(keyPrefix),
    };
  };
  storeContract('redis', redisHarness);
  campaignStoreContract('redis', redisHarness);

  it('keeps every key under the prefix', async () => {
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    const store = await openRedisStore({ url: REDIS_URL, keyPrefix });
    await store.claimOnce('t', 60_000);
    await store.enqueueEvent({
      name: 'code/workflow_run.completed',
      provider: 'code',
      idempotencyKey: 'k',
      payload: {},
    });
    await store.incrementWindowCounter('ip', 60_000);
    await store.markProviderVerified('code', 1);
    await store.close();
    const client = new Redis(REDIS_URL);
    const keys = await client.keys(`${keyPrefix}*`);
    await client.quit();
    expect(keys.length).toBeGreaterThanOrEqual(4);
    await deleteKeys(keyPrefix);
  });

  it('fails to open, rather than hang, when Redis cannot be reached', async () => {
    await expect(openRedisStore({ url: 'redis://127.0.0.1:1' })).rejects.toThrow();
  });
});
