// The Redis adapter against the store contract. Needs a Redis at REDIS_URL (default
// redis://127.0.0.1:6379); skipped, saying why, when none answers. Every run uses its own key
// prefix and deletes its keys afterwards, so parallel runs never meet.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { campaignRecord, newContact } from '../outbound/fixtures.js';
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

  it('gives every key of an ended campaign a lifetime, and every other campaign key a bound', async () => {
    // A fleet shares this Redis: nothing a campaign writes may stay forever or grow without limit.
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    const store = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const client = new Redis(REDIS_URL);
    try {
      const record = campaignRecord({ id: 'cmp_ttl', createdAtMs: Date.now() });
      await store.createCampaign(record);
      await store.addContacts('cmp_ttl', [newContact(0), newContact(1)], Date.now());
      await store.transitionCampaign('cmp_ttl', ['draft'], 'running', {});
      const begun = await store.beginAttempt({
        campaignId: 'cmp_ttl',
        seq: 1,
        owner: 'a',
        from: null,
        nowMs: Date.now(),
        maxConcurrent: 5,
        callsPerSecond: 1,
      });
      if (!begun.ok) throw new Error(begun.reason);
      await store.recordCallSid('cmp_ttl', begun.attempt.id, 'CA-ttl');
      await store.recordDialResult('cmp_ttl', { id: 'r', atMs: Date.now(), failed: false }, 60_000);
      await store.beatDialer('a', Date.now(), 60_000);
      await store.transitionCampaign('cmp_ttl', ['running'], 'cancelled', { endedAtMs: Date.now() });
      const keys = await client.keys(`${keyPrefix}*`);
      const campaignKeys = keys.filter((key) => key.includes('{c:cmp_ttl}'));
      expect(campaignKeys.length).toBeGreaterThan(8);
      for (const key of campaignKeys)
        expect(await client.pttl(key), key).toBeGreaterThan(80 * 24 * 3_600_000);
      expect(await client.pttl(`${keyPrefix}attempt-call:CA-ttl`)).toBeGreaterThan(0);
      expect(await client.pttl(`${keyPrefix}dialer:a`)).toBeGreaterThan(0);
      // The list and the active hint stay, bounded: by the index's cap and by the campaigns not yet settled.
      const others = keys.filter((key) => !key.includes('{c:cmp_ttl}') && !key.includes('{queue}'));
      expect(others.sort()).toEqual(
        [
          `${keyPrefix}attempt-call:CA-ttl`,
          `${keyPrefix}dialer:a`,
          `${keyPrefix}{campaigns}:active`,
          `${keyPrefix}{campaigns}:index`,
        ].sort(),
      );
    } finally {
      await client.quit();
      await store.close();
      await deleteKeys(keyPrefix);
    }
  });

  it('fails to open, rather than hang, when Redis cannot be reached', async () => {
    await expect(openRedisStore({ url: 'redis://127.0.0.1:1' })).rejects.toThrow();
  });
});
