// The Redis adapter against the store contract, on the shared test Redis and on a throwaway
// redis-server in cluster mode (which refuses any step whose keys span hash slots), plus what only
// Redis has: every key's lifetime or bound, keys spread over slots, claim expiries, the queue's
// consumer group kept small, and the upgrade of the earlier key layout. Needs a Redis at REDIS_URL
// (default redis://127.0.0.1:6379) and redis-server for the cluster-mode run; skipped, saying why,
// when either is missing. Every run uses its own key prefix and deletes its keys afterwards.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { CLOCK_SKEW_ALLOWANCE_MS } from '../../src/store/limits.js';
import { openRedisStore, type RedisStoreOptions } from '../../src/store/redis.js';
import { UNEXPIRING_KEYS } from '../../src/store/redis/keys.js';
import type { Store } from '../../src/store/store.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { campaignRecord, newContact } from '../outbound/fixtures.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { accessStoreContract } from './access-contract.js';
import { campaignStoreContract } from './campaign-contract.js';
import { storeContract } from './contract.js';

const available = await redisAvailable();
if (!available) console.warn(`skipping the Redis store suites: no Redis answers at ${REDIS_URL}`);
if (!REDIS_SERVER) console.warn('skipping the cluster-mode Redis store suite: redis-server not found');

const newPrefix = () => `callbridge-test:${randomUUID()}:`;

function record(callSid: string, startedMs: number): CallRecord {
  return callRecordFixture(callSid, { startedMs });
}

/** One of everything the store writes: claims, keys, counters, queue states, records, verifications. */
async function fullWorkload(store: Store): Promise<void> {
  await store.claimOnce('nonce', 30_000);
  const claim = await store.claimIdempotencyKey('code:d-1', 60_000);
  if (claim.status === 'claimed') await store.commitIdempotencyKey('code:d-1', claim.token, 60_000);
  await store.claimIdempotencyKey('code:d-2', 60_000);
  await store.incrementWindowCounter('webhook-auth-failures:198.51.100.7', 60_000);
  await store.markProviderVerified('code', Date.now());
  const event = (n: number) => ({
    name: 'code/x',
    provider: 'code',
    idempotencyKey: `k-${n}`,
    payload: { n },
  });
  for (const n of [1, 2, 3, 4]) await store.enqueueEvent(event(n));
  const dead = await store.claimNextEvent('worker', 60_000);
  if (dead) await store.deadLetterEvent(dead, 'failed');
  const delayed = await store.claimNextEvent('worker', 60_000);
  if (delayed) await store.retryEventLater(delayed, 60_000, 'later');
  const acked = await store.claimNextEvent('worker', 60_000);
  if (acked) await store.ackEvent(acked);
  await store.claimNextEvent('worker', 60_000); // left in flight
  const t = Date.now();
  for (const [i, ageMs] of [0, 3_600_000, 3 * 86_400_000].entries()) {
    await store.saveCallRecord(record(`CA-${i}`, t - ageMs));
  }
  await store.listCallRecords({ limit: 10 });
  await store.enqueueAnalysisJob({ callSid: 'CA-a1', language: 'en', text: 't', truncated: false }, 10);
  await store.enqueueAnalysisJob({ callSid: 'CA-a2', language: 'en', text: 't', truncated: false }, 10);
  const job = await store.claimAnalysisJob('worker', 60_000);
  if (job) await store.retryAnalysisJobLater(job, 60_000, 'later');
  await store.claimAnalysisJob('worker', 60_000); // left in progress
  await store.listDeadLetters(10);
  await store.queueStats();
  await store.saveApiKey({
    id: 'k1',
    name: 'ops',
    role: 'viewer',
    secretHash: 'a'.repeat(64),
    createdAtMs: t,
  });
  await store.saveSession({
    id: 's1',
    keyId: 'k1',
    name: 'ops',
    role: 'viewer',
    csrf: 'c',
    expiresAtMs: t + 60_000,
  });
  await store.appendAudit({
    atMs: t,
    keyName: 'ops',
    role: 'admin',
    action: 'dnc.add',
    target: '+15550100001',
  });
}

async function keysUnder(client: Redis, prefix: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

describe.skipIf(!available)('redis', () => {
  campaignStoreContract('redis', async () => {
    const keyPrefix = newPrefix();
    return {
      open: () => openRedisStore({ url: REDIS_URL, keyPrefix }),
      cleanup: () => deleteKeys(keyPrefix),
    };
  });
  storeContract('redis', async () => {
    const keyPrefix = newPrefix();
    return {
      open: (limits) => openRedisStore({ url: REDIS_URL, keyPrefix, limits }),
      cleanup: () => deleteKeys(keyPrefix),
    };
  });
  accessStoreContract('redis', async () => {
    const keyPrefix = newPrefix();
    return {
      open: (limits) => openRedisStore({ url: REDIS_URL, keyPrefix, limits }),
      cleanup: () => deleteKeys(keyPrefix),
    };
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

  describe('keys', () => {
    const prefix = newPrefix();
    const opened: Store[] = [];
    let client: Redis;
    const open = async (options: Partial<RedisStoreOptions> = {}) => {
      const store = await openRedisStore({ url: REDIS_URL, keyPrefix: prefix, ...options });
      opened.push(store);
      return store;
    };

    beforeAll(() => {
      client = new Redis(REDIS_URL);
    });
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
      await deleteKeys(prefix);
    });
    afterAll(async () => {
      await client.quit();
    });

    it('gives every key it writes an expiry, or a bound keys.ts names', async () => {
      // Years of running must not leave keys that live for ever and grow.
      await fullWorkload(await open());
      const keys = await keysUnder(client, prefix);
      const unbounded: string[] = [];
      for (const key of keys) {
        const ttlMs = await client.pttl(key);
        if (ttlMs > 0) continue;
        if (!(key.slice(prefix.length) in UNEXPIRING_KEYS)) unbounded.push(`${key} (pttl ${ttlMs})`);
      }
      expect(unbounded).toEqual([]);
      // The workload reached every kind of key.
      const kinds = new Set(keys.map((key) => key.slice(prefix.length).replace(/:.*$/, '')));
      expect([...kinds].sort()).toEqual(
        [
          'call',
          'calls-by-start',
          'count',
          'idem',
          'once',
          'provider-verified',
          '{queue}',
          'api-keys',
          'session',
          'key-sessions',
          'sessions',
          'audit',
          '{analysis}',
        ].sort(),
      );
      const queueKeys = keys.filter((key) => key.includes('{queue}')).map((key) => key.slice(prefix.length));
      expect(queueKeys.sort()).toEqual(
        ['{queue}:ages', '{queue}:dead', '{queue}:dead-at', '{queue}:delayed', '{queue}:stream'].sort(),
      );
    });

    it('holds a stream token claim for its validity plus CLOCK_SKEW_ALLOWANCE_MS', async () => {
      const store = await open();
      await store.claimOnce('stream-token:n-1', 30_000);
      const ttlMs = await client.pttl(`${prefix}once:stream-token:n-1`);
      expect(ttlMs).toBeGreaterThan(30_000 + CLOCK_SKEW_ALLOWANCE_MS - 2_000);
      expect(ttlMs).toBeLessThanOrEqual(30_000 + CLOCK_SKEW_ALLOWANCE_MS);
    });

    it('expires each day of the record index a retention after the day ends', async () => {
      const retentionMs = 90 * 86_400_000;
      const store = await open({ callRecordRetentionMs: retentionMs });
      const startedMs = Date.now() - 3 * 86_400_000;
      await store.saveCallRecord(record('CA-expiry', startedMs));
      const day = new Date(startedMs).toISOString().slice(0, 10);
      const dayEndMs = Date.parse(`${day}T00:00:00Z`) + 86_400_000;
      const expiresAtMs = Number(await client.call('PEXPIRETIME', `${prefix}calls-by-start:${day}`));
      expect(expiresAtMs).toBe(dayEndMs + retentionMs);
      const recordTtlMs = await client.pttl(`${prefix}call:CA-expiry`);
      expect(Math.abs(startedMs + retentionMs - Date.now() - recordTtlMs)).toBeLessThan(2_000);
    });

    it('drops queue consumers idle past the limit with nothing pending, and keeps the others', async () => {
      // Every process start names a new consumer: the group must not collect them for ever.
      const store = await open({ consumerIdleMs: 100 });
      const event = (n: number) => ({
        name: 'code/x',
        provider: 'code',
        idempotencyKey: `c-${n}`,
        payload: {},
      });
      for (const n of [1, 2, 3]) await store.enqueueEvent(event(n));
      const gone = await store.claimNextEvent('gone-idle', 60_000);
      if (!gone) throw new Error('expected an event');
      await store.ackEvent(gone);
      await store.claimNextEvent('gone-with-pending', 60_000);
      await sleep(150);
      expect(await store.claimNextEvent('live', 60_000)).not.toBeNull();
      const consumers = (await client.xinfo(
        'CONSUMERS',
        `${prefix}{queue}:stream`,
        'callbridge',
      )) as string[][];
      const names = consumers.map((fields) => fields[fields.indexOf('name') + 1]).sort();
      expect(names).toEqual(['gone-with-pending', 'live']);
    });

    it('moves records and dead letters of the earlier layout into this one when it opens', async () => {
      const startedMs = Date.now() - 3_600_000;
      const legacy = record('CA-legacy', startedMs);
      const member = `${String(startedMs).padStart(16, '0')}CA-legacy`;
      await client.set(`${prefix}{calls}:record:CA-legacy`, JSON.stringify(legacy), 'PX', 86_400_000);
      await client.zadd(`${prefix}{calls}:by-start`, 0, member);
      // A member whose record already expired is dropped.
      await client.zadd(`${prefix}{calls}:by-start`, 0, `${String(startedMs).padStart(16, '0')}CA-expired`);
      const letter = {
        id: 'dead-1',
        name: 'code/x',
        provider: 'code',
        idempotencyKey: 'k',
        payload: { n: 1 },
        attempts: 12,
        enqueuedAtMs: Date.now() - 60_000,
        lastError: 'failed',
        deadAtMs: Date.now() - 30_000,
      };
      await client.hset(`${prefix}{queue}:dead`, 'dead-1', JSON.stringify(letter));

      const store = await open();
      expect(await store.getCallRecord('CA-legacy')).toEqual(legacy);
      expect((await store.listCallRecords({ limit: 10 })).calls).toEqual([legacy]);
      expect(await store.listDeadLetters(10)).toEqual([letter]);
      expect((await store.queueStats()).deadLetters).toBe(1);
      const left = (await keysUnder(client, prefix)).filter((key) => key.includes('{calls}'));
      expect(left).toEqual([]);
    });

    it('keeps every key under the prefix', async () => {
      await fullWorkload(await open());
      const client2 = new Redis(REDIS_URL);
      const all = await client2.keys(`*${prefix.slice('callbridge-test:'.length)}*`);
      await client2.quit();
      expect(all.length).toBeGreaterThanOrEqual(10);
      expect(all.filter((key) => !key.startsWith(prefix))).toEqual([]);
    });
  });

  it('fails to open, rather than hang, when Redis cannot be reached', async () => {
    await expect(openRedisStore({ url: 'redis://127.0.0.1:1' })).rejects.toThrow();
  });
});

describe.skipIf(!REDIS_SERVER)('redis in cluster mode', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer({ cluster: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  storeContract('redis cluster-mode', async () => {
    const keyPrefix = newPrefix();
    return {
      open: (limits) => openRedisStore({ url: server.url, keyPrefix, limits }),
      cleanup: () => deleteKeys(keyPrefix, server.url),
    };
  });

  it('spreads call records over hash slots, and keeps only the bounded queues under one each', async () => {
    // No slot may hold unbounded data: records and index days hash apart; each bounded queue is one slot.
    const prefix = newPrefix();
    const store = await openRedisStore({ url: server.url, keyPrefix: prefix });
    const client = new Redis(server.url);
    try {
      await fullWorkload(store);
      for (let i = 0; i < 40; i++)
        await store.saveCallRecord(record(`CA-spread-${i}`, Date.now() - i * 60_000));
      const keys = await keysUnder(client, prefix);
      const slotOf = async (key: string) => Number(await client.call('CLUSTER', 'KEYSLOT', key));
      const recordSlots = new Set(
        await Promise.all(keys.filter((key) => key.startsWith(`${prefix}call:`)).map(slotOf)),
      );
      expect(recordSlots.size).toBeGreaterThan(30);
      const queueSlots = new Set(
        await Promise.all(keys.filter((key) => key.includes('{queue}')).map(slotOf)),
      );
      expect(queueSlots.size).toBe(1);
      const analysisSlots = new Set(
        await Promise.all(keys.filter((key) => key.includes('{analysis}')).map(slotOf)),
      );
      expect(analysisSlots.size).toBe(1);
      expect(
        keys.filter((key) => /[{}]/.test(key) && !key.includes('{queue}:') && !key.includes('{analysis}:')),
      ).toEqual([]);
    } finally {
      await store.close();
      await client.quit();
      await deleteKeys(prefix, server.url);
    }
  });
});
