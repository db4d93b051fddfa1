// Campaign dispatch across a fleet, at the store: three instances sharing one Redis (one store
// client each, as three processes have) lease due contacts and begin their attempts at once, in
// rounds, until none is left; every contact is begun exactly once, by one instance, and the
// campaign's concurrency cap holds across the three. Needs Redis.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/store.js';
import { campaignRecord, newContact } from '../outbound/fixtures.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';

const hasRedis = await redisAvailable();
if (!hasRedis) console.warn(`skipping test/fleet/campaign-claims.test.ts: no Redis answers at ${REDIS_URL}`);

const T0 = Date.UTC(2025, 0, 6, 15, 0, 0);
const CONTACTS = 30;
const CAP = 12;

describe.skipIf(!hasRedis)('campaign dispatch across three instances', () => {
  const prefix = `cbtest-dispatch-${randomBytes(4).toString('hex')}:`;
  let stores: Store[] = [];

  afterEach(async () => {
    for (const store of stores) await store.close();
    stores = [];
    await deleteKeys(prefix);
  });

  it('begins every contact once, on one instance, within the cap shared by all', async () => {
    stores = await Promise.all([1, 2, 3].map(() => openRedisStore({ url: REDIS_URL, keyPrefix: prefix })));
    const [first] = stores as [Store];
    const record = campaignRecord({ id: `cmp_${randomBytes(10).toString('hex')}`, createdAtMs: T0 });
    await first.createCampaign(record);
    const contacts = Array.from({ length: CONTACTS }, (_, i) => newContact(i));
    expect((await first.addContacts(record.id, contacts, T0)).ok).toBe(true);
    await first.transitionCampaign(record.id, ['draft'], 'running', { startedAtMs: T0 });

    const begun = new Map<number, string[]>();
    let peak = 0;
    // The pace lets one dial a millisecond: each try takes the next instant of the round.
    let instant = 0;
    /** Leases and begins what it can; the attempts stay open until the round ends. */
    const dispatch = async (store: Store, owner: string, nowMs: number) => {
      const opened: string[] = [];
      for (const contact of await store.leaseDueContacts(record.id, { nowMs, limit: 3, leaseMs: 30_000 })) {
        const begin = () =>
          store.beginAttempt({
            campaignId: record.id,
            seq: contact.seq,
            owner,
            from: null,
            nowMs: nowMs + (instant += 1),
            maxConcurrent: CAP,
            callsPerSecond: 1_000,
          });
        let result = await begin();
        // Another instance's try, issued later, may reach the store first and take a later instant.
        while (!result.ok && result.reason === 'pace') result = await begin();
        if (!result.ok) {
          await store.releaseContact(record.id, contact.seq, nowMs);
          continue;
        }
        begun.set(contact.seq, [...(begun.get(contact.seq) ?? []), owner]);
        opened.push(result.attempt.id);
      }
      return opened;
    };
    for (let round = 0; begun.size < CONTACTS && round < 50; round++) {
      const nowMs = T0 + round * 1_000;
      const opened = (
        await Promise.all(stores.map((store, i) => dispatch(store, `instance-${i + 1}`, nowMs)))
      ).flat();
      peak = Math.max(peak, opened.length);
      // The round's calls end: their slots free for the next round.
      for (const attemptId of opened) {
        await first.finishAttempt({
          campaignId: record.id,
          attemptId,
          nowMs: nowMs + 500,
          result: { kind: 'counted', outcome: 'completed', details: {} },
          next: { state: 'done', outcome: 'completed' },
        });
      }
    }
    expect([...begun.keys()].sort((a, b) => a - b)).toEqual(contacts.map((_, i) => i + 1));
    for (const [seq, owners] of begun) expect(owners, `contact ${seq}`).toHaveLength(1);
    expect(new Set([...begun.values()].flat()).size).toBe(3);
    expect(peak).toBeLessThanOrEqual(CAP);
    expect(peak).toBeGreaterThan(3);
  });
});
