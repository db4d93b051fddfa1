// The access contract (API keys, sessions, audit log), the do-not-call listing and the call-record
// filters the console uses, run against every adapter (sqlite.test.ts, redis.test.ts).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApiKeyRecord, SessionRecord } from '../../src/store/access.js';
import type { CallRecord } from '../../src/store/call-record.js';
import type { Store } from '../../src/store/store.js';
import type { StoreHarness } from './contract.js';
import { callRecordFixture } from '../helpers/call-record.js';

function apiKey(id: string, createdAtMs: number, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return { id, name: `key ${id}`, role: 'operator', secretHash: 'a'.repeat(64), createdAtMs, ...extra };
}

function session(id: string, keyId: string | null, expiresAtMs: number): SessionRecord {
  return { id, keyId, name: 'ops', role: 'viewer', csrf: `csrf-${id}`, expiresAtMs };
}

function call(callSid: string, minutesAgo: number, extra: Partial<CallRecord> = {}): CallRecord {
  return callRecordFixture(callSid, { startedMs: Date.now() - minutesAgo * 60_000, ...extra });
}

export function accessStoreContract(name: string, harness: () => Promise<StoreHarness>): void {
  describe(`${name} access and console listings contract`, () => {
    let h: StoreHarness;
    let store: Store;

    beforeEach(async () => {
      h = await harness();
      store = await h.open();
    });
    afterEach(async () => {
      await store.close();
      await h.cleanup();
    });

    it('keeps API keys, lists them oldest first, and forgets a deleted one', async () => {
      await store.saveApiKey(apiKey('k2', 2_000, { role: 'admin' }));
      await store.saveApiKey(apiKey('k1', 1_000));
      expect(await store.getApiKey('k2')).toEqual(apiKey('k2', 2_000, { role: 'admin' }));
      expect((await store.listApiKeys()).map((k) => k.id)).toEqual(['k1', 'k2']);
      expect(await store.deleteApiKey('k1')).toBe(true);
      expect(await store.deleteApiKey('k1')).toBe(false);
      expect(await store.getApiKey('k1')).toBeNull();
      expect((await store.listApiKeys()).map((k) => k.id)).toEqual(['k2']);
    });

    it('shares keys and sessions with another instance over the same state', async () => {
      // A console signed in on one instance is signed in on every one.
      const other = await h.open();
      try {
        await store.saveApiKey(apiKey('k1', 1_000));
        await store.saveSession(session('s1', 'k1', Date.now() + 60_000));
        expect((await other.getApiKey('k1'))?.name).toBe('key k1');
        expect(await other.getSession('s1')).toEqual(
          session('s1', 'k1', (await store.getSession('s1'))!.expiresAtMs),
        );
      } finally {
        await other.close();
      }
    });

    it('forgets an expired session, a deleted one, and those of a deleted key', async () => {
      await store.saveApiKey(apiKey('k1', 1_000));
      await store.saveSession(session('s1', 'k1', Date.now() + 60_000));
      await store.saveSession(session('s2', 'k1', Date.now() + 60_000));
      await store.saveSession(session('s3', null, Date.now() + 60_000));
      await store.saveSession(session('old', null, Date.now() - 1));
      expect(await store.getSession('old')).toBeNull();
      await store.deleteSession('s2');
      expect(await store.getSession('s2')).toBeNull();
      expect(await store.getSession('s1')).not.toBeNull();
      await store.deleteApiKey('k1');
      expect(await store.getSession('s1')).toBeNull();
      expect((await store.getSession('s3'))?.csrf).toBe('csrf-s3');
    });

    it("keeps an ADMIN_TOKEN session's token fingerprint, and ends every session at once", async () => {
      // A session made with ADMIN_TOKEN is bound to that token; DELETE /v1/sessions ends them all.
      await store.saveApiKey(apiKey('k1', 1_000));
      await store.saveSession({
        ...session('t1', null, Date.now() + 60_000),
        tokenFingerprint: 'f'.repeat(64),
      });
      await store.saveSession(session('s1', 'k1', Date.now() + 60_000));
      expect((await store.getSession('t1'))?.tokenFingerprint).toBe('f'.repeat(64));
      await store.deleteAllSessions();
      expect(await store.getSession('t1')).toBeNull();
      expect(await store.getSession('s1')).toBeNull();
      await store.deleteAllSessions();
      await store.saveSession(session('s2', 'k1', Date.now() + 60_000));
      expect(await store.getSession('s2')).not.toBeNull();
    });

    it("names the key of an audit entry by id, null for ADMIN_TOKEN's", async () => {
      await store.appendAudit({
        atMs: 1,
        keyId: 'k1',
        keyName: 'ops',
        role: 'operator',
        action: 'a',
        target: 't',
      });
      await store.appendAudit({ atMs: 2, keyName: 'admin-token', role: 'admin', action: 'b', target: 't' });
      const { entries } = await store.listAudit({ limit: 5 });
      expect(entries.map((e) => [e.keyId, e.keyName])).toEqual([
        [null, 'admin-token'],
        ['k1', 'ops'],
      ]);
    });

    it('appends audit entries and pages them newest first without repeats', async () => {
      for (let n = 1; n <= 5; n++) {
        await store.appendAudit({
          atMs: 1_000 * n,
          keyName: 'ops',
          role: 'operator',
          action: 'call.hangup',
          target: `CA-${n}`,
          ...(n === 3 ? { detail: { to: '+15550100003' } } : {}),
        });
      }
      const first = await store.listAudit({ limit: 2 });
      expect(first.entries.map((e) => e.target)).toEqual(['CA-5', 'CA-4']);
      const second = await store.listAudit({ limit: 2, cursor: first.nextCursor! });
      expect(second.entries.map((e) => e.target)).toEqual(['CA-3', 'CA-2']);
      expect(second.entries[0]).toMatchObject({
        atMs: 3_000,
        keyName: 'ops',
        role: 'operator',
        action: 'call.hangup',
        detail: { to: '+15550100003' },
      });
      const last = await store.listAudit({ limit: 2, cursor: second.nextCursor! });
      expect(last.entries.map((e) => e.target)).toEqual(['CA-1']);
      expect(last.nextCursor).toBeNull();
      await expect(store.listAudit({ limit: 2, cursor: 'not-a-cursor' })).rejects.toMatchObject({
        code: 'CALLBRIDGE_BAD_REQUEST',
      });
    });

    it('lists the do-not-call list in order, searched by part of the number, page by page', async () => {
      await store.addDoNotCall(['+15550100003', '+15550100001', '+442071838750', '+15550100002'], 5_000);
      const all = await store.listDoNotCall({ limit: 3 });
      expect(all.numbers.map((n) => n.number)).toEqual(['+15550100001', '+15550100002', '+15550100003']);
      expect(all.numbers[0]!.addedAtMs).toBe(5_000);
      const rest = await store.listDoNotCall({ limit: 3, cursor: all.nextCursor! });
      expect(rest).toEqual({ numbers: [{ number: '+442071838750', addedAtMs: 5_000 }], nextCursor: null });
      const found = await store.listDoNotCall({ q: '0100002', limit: 10 });
      expect(found.numbers.map((n) => n.number)).toEqual(['+15550100002']);
      await store.removeDoNotCall('+15550100002');
      expect((await store.listDoNotCall({ q: '0100002', limit: 10 })).numbers).toEqual([]);
    });

    it('filters call records by direction, carrier, profile, campaign and number', async () => {
      const outbound = {
        direction: 'outbound' as const,
        carrier: 'telnyx',
        profile: 'sales',
        from: '+15550100009',
        to: '+15550100777',
        outbound: { campaign: 'cmp-1', contact: 1, attempt: 'a-1', answeredBy: null, amdVerdict: null },
      };
      await store.saveCallRecord(call('CA-in', 10));
      await store.saveCallRecord(call('CA-out', 5, outbound));
      await store.saveCallRecord(
        call('CA-out2', 3, { ...outbound, outbound: { ...outbound.outbound, campaign: null } }),
      );
      const sids = async (filter: Record<string, string>) =>
        (await store.listCallRecords({ limit: 10, ...filter })).calls.map((c) => c.callSid);
      expect(await sids({ direction: 'outbound' })).toEqual(['CA-out2', 'CA-out']);
      expect(await sids({ direction: 'inbound' })).toEqual(['CA-in']);
      expect(await sids({ carrier: 'telnyx' })).toEqual(['CA-out2', 'CA-out']);
      expect(await sids({ profile: 'support' })).toEqual(['CA-in']);
      expect(await sids({ campaign: 'cmp-1' })).toEqual(['CA-out']);
      expect(await sids({ number: '+15550100777' })).toEqual(['CA-out2', 'CA-out']);
      expect(await sids({ number: '+15550100001' })).toEqual(['CA-in']);
      expect(await sids({ number: '+15550100009', carrier: 'twilio' })).toEqual([]);
      const paged = await store.listCallRecords({ limit: 1, direction: 'outbound' });
      expect(paged.calls.map((c) => c.callSid)).toEqual(['CA-out2']);
      const next = await store.listCallRecords({
        limit: 1,
        direction: 'outbound',
        cursor: paged.nextCursor!,
      });
      expect(next.calls.map((c) => c.callSid)).toEqual(['CA-out']);
    });
  });
}
