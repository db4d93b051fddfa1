// The outbound part of the store contract (campaigns, contacts, attempts, the breaker's window,
// dialer heartbeats, the do-not-call list), run against every adapter by sqlite.test.ts and
// redis.test.ts. `open()` may be called several times: each call is one more instance.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CampaignRecord, NewContact } from '../../src/store/campaign-records.js';
import type { Store } from '../../src/store/store.js';
import type { StoreHarness } from './contract.js';
import { campaignRecord, newContact } from '../outbound/fixtures.js';

const T0 = Date.UTC(2025, 0, 6, 15, 0, 0);

export function campaignStoreContract(name: string, harness: () => Promise<StoreHarness>): void {
  describe(`${name} store contract: outbound`, () => {
    let h: StoreHarness;
    let opened: Store[];
    let store: Store;
    let serial = 0;

    const open = async () => {
      const s = await h.open();
      opened.push(s);
      return s;
    };
    /** A stored campaign in `state`, with `contacts` added (numbers +1212555<0100 + i>). */
    const campaign = async (
      state: CampaignRecord['state'] = 'running',
      contacts: NewContact[] = [],
      extra: Partial<CampaignRecord> = {},
    ) => {
      serial += 1;
      const record = campaignRecord({
        id: `cmp_${serial}x${Date.now().toString(36)}`,
        createdAtMs: T0 + serial,
        ...extra,
      });
      await store.createCampaign(record);
      if (contacts.length > 0) {
        const added = await store.addContacts(record.id, contacts, T0);
        expect(added.ok).toBe(true);
      }
      if (state !== 'draft') await store.transitionCampaign(record.id, ['draft'], state, { startedAtMs: T0 });
      return record.id;
    };
    const contacts = (n: number) => Array.from({ length: n }, (_, i) => newContact(i));
    const begin = (
      s: Store,
      campaignId: string,
      seq: number,
      over: Partial<Parameters<Store['beginAttempt']>[0]> = {},
    ) =>
      s.beginAttempt({
        campaignId,
        seq,
        owner: 'dialer-a',
        from: null,
        nowMs: T0,
        maxConcurrent: 100,
        // One dial a millisecond: tests of other rules give each begin its own instant.
        callsPerSecond: 1_000,
        ...over,
      });

    beforeEach(async () => {
      h = await harness();
      opened = [];
      store = await open();
    });
    afterEach(async () => {
      for (const s of opened) await s.close();
      await h.cleanup();
    });

    describe('campaigns', () => {
      it('stores a campaign and gives back every field; an unknown id is null', async () => {
        const record = campaignRecord({ id: 'cmp_roundtrip', createdAtMs: T0 });
        await store.createCampaign(record);
        expect(await store.getCampaign('cmp_roundtrip')).toEqual(record);
        expect(await store.getCampaign('cmp_unknown')).toBeNull();
      });

      it('lists newest first, page by page, and refuses a cursor it did not hand out', async () => {
        for (let i = 0; i < 7; i++) {
          await store.createCampaign(campaignRecord({ id: `cmp_list${i}`, createdAtMs: T0 + (i % 3) }));
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listCampaigns({ limit: 3, ...(cursor ? { cursor } : {}) });
          seen.push(...page.campaigns.map((c) => c.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(seen).toEqual([
          'cmp_list5',
          'cmp_list2',
          'cmp_list4',
          'cmp_list1',
          'cmp_list6',
          'cmp_list3',
          'cmp_list0',
        ]);
        for (const bad of ['nope', 'x'.repeat(2_000), Buffer.from('c1|../etc').toString('base64url')]) {
          await expect(store.listCampaigns({ limit: 3, cursor: bad })).rejects.toMatchObject({
            code: 'CALLBRIDGE_BAD_REQUEST',
          });
        }
      });

      it('moves a campaign only from the states named, one winner among instances', async () => {
        const id = await campaign('draft');
        const other = await open();
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            (i % 2 ? store : other).transitionCampaign(id, ['draft'], 'running', { startedAtMs: T0 + i }),
          ),
        );
        expect(results.filter((r) => r !== null)).toHaveLength(1);
        expect((await store.getCampaign(id))?.state).toBe('running');
        expect(await store.transitionCampaign(id, ['draft'], 'running', {})).toBeNull();
        const paused = await store.transitionCampaign(id, ['running'], 'paused', {
          pause: { by: 'breaker', message: 'too many failures', atMs: T0 },
        });
        expect(paused).toMatchObject({ state: 'paused', pause: { by: 'breaker' } });
        expect(await store.transitionCampaign('cmp_missing', ['draft'], 'running', {})).toBeNull();
      });

      it('lists running and paused campaigns as active, and ended ones until their attempts close', async () => {
        const running = await campaign('running', contacts(1));
        const draft = await campaign('draft');
        expect(await store.activeCampaignIds()).toContain(running);
        expect(await store.activeCampaignIds()).not.toContain(draft);
        const begun = await begin(store, running, 1);
        if (!begun.ok) throw new Error(begun.reason);
        await store.transitionCampaign(running, ['running'], 'cancelled', { endedAtMs: T0 });
        await store.settleCampaign(running);
        expect(await store.activeCampaignIds()).toContain(running);
        await store.finishAttempt({
          campaignId: running,
          attemptId: begun.attempt.id,
          nowMs: T0,
          result: { kind: 'counted', outcome: 'cancelled', details: {} },
          next: { state: 'done', outcome: 'cancelled' },
        });
        await store.settleCampaign(running);
        expect(await store.activeCampaignIds()).not.toContain(running);
      });
    });

    describe('contacts', () => {
      it('adds contacts in order, skips numbers the campaign has, and keeps invalid ones as done', async () => {
        const id = await campaign('draft');
        const bad: NewContact = { ...newContact(9), phone: '12', invalid: 'phone is not a valid number' };
        const first = await store.addContacts(id, [newContact(0), newContact(1), bad], T0);
        expect(first).toEqual({ ok: true, added: 3, duplicates: [], refused: [], refusedReason: null });
        const second = await store.addContacts(id, [newContact(1), newContact(2), bad], T0);
        expect(second).toEqual({ ok: true, added: 2, duplicates: [0], refused: [], refusedReason: null });

        const page = await store.listContacts(id, { limit: 10 });
        expect(page.contacts.map((c) => [c.seq, c.phone, c.state])).toEqual([
          [1, '+12125550100', 'pending'],
          [2, '+12125550101', 'pending'],
          [3, '12', 'done'],
          [4, '+12125550102', 'pending'],
          [5, '12', 'done'],
        ]);
        expect(page.contacts[2]).toMatchObject({ outcome: 'invalid', note: 'phone is not a valid number' });
        expect(page.contacts[0]).toMatchObject({
          campaignId: id,
          variables: { first_name: 'Ada0', plan: '' },
          timezone: 'America/New_York',
          attempts: [],
          dueAtMs: T0,
        });

        const tally = await store.contactTally(id);
        expect(tally.states).toEqual({ pending: 3, dialing: 0, retry: 0, done: 2 });
        expect(tally.outcomes.invalid).toBe(2);
        expect(tally.callable).toBe(3);
        expect(tally.variables).toEqual({ first_name: 3 });
      });

      it('refuses contacts for a campaign that ended or does not exist', async () => {
        const id = await campaign('running');
        await store.transitionCampaign(id, ['running'], 'completed', { endedAtMs: T0 });
        expect(await store.addContacts(id, contacts(1), T0)).toEqual({ ok: false, reason: 'ended' });
        expect(await store.addContacts('cmp_nothing', contacts(1), T0)).toEqual({
          ok: false,
          reason: 'not_found',
        });
      });

      it('pages contacts in order, filtered by state, and refuses a foreign cursor', async () => {
        const id = await campaign('running', contacts(7));
        await store.closeContact(id, 2, { outcome: 'dnc', note: null, nowMs: T0 });
        await store.closeContact(id, 5, { outcome: 'dnc', note: null, nowMs: T0 });
        const all: number[] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listContacts(id, { limit: 3, ...(cursor ? { cursor } : {}) });
          all.push(...page.contacts.map((c) => c.seq));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        expect(all).toEqual([1, 2, 3, 4, 5, 6, 7]);
        const done = await store.listContacts(id, { state: 'done', limit: 1 });
        expect(done.contacts.map((c) => c.seq)).toEqual([2]);
        const rest = await store.listContacts(id, { state: 'done', limit: 5, cursor: done.nextCursor! });
        expect(rest).toEqual({
          contacts: [expect.objectContaining({ seq: 5, outcome: 'dnc' })],
          nextCursor: null,
        });
        await expect(store.listContacts(id, { limit: 3, cursor: 'c1' })).rejects.toMatchObject({
          code: 'CALLBRIDGE_BAD_REQUEST',
        });
      });

      it('leases each due contact to one caller among instances, earliest due first, until the lease lapses', async () => {
        const id = await campaign('running', contacts(6));
        await store.releaseContact(id, 1, T0 + 60_000); // not due yet
        await store.releaseContact(id, 6, T0 - 5_000); // due before the others
        const other = await open();
        const leases = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? store : other).leaseDueContacts(id, { nowMs: T0, limit: 2, leaseMs: 30_000 }),
          ),
        );
        const seqs = leases.flat().map((c) => c.seq);
        expect(seqs.sort()).toEqual([2, 3, 4, 5, 6]);
        expect(await store.leaseDueContacts(id, { nowMs: T0 + 1_000, limit: 10, leaseMs: 30_000 })).toEqual(
          [],
        );
        const first = await store.leaseDueContacts(id, { nowMs: T0 + 31_000, limit: 1, leaseMs: 30_000 });
        expect(first.map((c) => c.seq)).toEqual([6]);
        const later = await store.leaseDueContacts(id, { nowMs: T0 + 61_000, limit: 10, leaseMs: 30_000 });
        expect(later.map((c) => c.seq).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      });

      it('says when the earliest waiting contact falls due, leased or not', async () => {
        const id = await campaign('running', contacts(3));
        await store.releaseContact(id, 1, T0 + 9_000);
        await store.releaseContact(id, 2, T0 + 5_000);
        await store.releaseContact(id, 3, T0 + 7_000);
        expect(await store.nextDueAtMs(id)).toBe(T0 + 5_000);
        await store.leaseDueContacts(id, { nowMs: T0 + 5_000, limit: 1, leaseMs: 60_000 });
        expect(await store.nextDueAtMs(id)).toBe(T0 + 5_000);
        await store.closeContact(id, 2, { outcome: 'dnc', note: null, nowMs: T0 });
        expect(await store.nextDueAtMs(id)).toBe(T0 + 7_000);
        await store.cancelWaitingContacts(id, 10, T0);
        expect(await store.nextDueAtMs(id)).toBeNull();
      });

      it('closes a waiting contact once, without a dial', async () => {
        const id = await campaign('running', contacts(2));
        expect(await store.closeContact(id, 1, { outcome: 'dnc', note: 'listed', nowMs: T0 })).toBe(true);
        expect(await store.closeContact(id, 1, { outcome: 'cancelled', note: null, nowMs: T0 })).toBe(false);
        expect(await store.getContact(id, 1)).toMatchObject({
          state: 'done',
          outcome: 'dnc',
          note: 'listed',
        });
        expect(await store.leaseDueContacts(id, { nowMs: T0, limit: 10, leaseMs: 1_000 })).toHaveLength(1);
        expect((await store.contactTally(id)).outcomes.dnc).toBe(1);
      });

      it('cancels the waiting contacts in batches and says when none is left unfinished', async () => {
        const id = await campaign('running', contacts(5));
        const begun = await begin(store, id, 3);
        expect(begun.ok).toBe(true);
        expect(await store.cancelWaitingContacts(id, 3, T0)).toBe(3);
        expect(await store.cancelWaitingContacts(id, 3, T0)).toBe(1);
        expect(await store.cancelWaitingContacts(id, 3, T0)).toBe(0);
        expect(await store.hasUnfinishedContacts(id)).toBe(true); // the one dialing
        if (!begun.ok) return;
        await store.finishAttempt({
          campaignId: id,
          attemptId: begun.attempt.id,
          nowMs: T0,
          result: { kind: 'counted', outcome: 'completed', details: {} },
          next: { state: 'done', outcome: 'completed' },
        });
        expect(await store.hasUnfinishedContacts(id)).toBe(false);
        expect((await store.contactTally(id)).outcomes).toMatchObject({ cancelled: 4, completed: 1 });
      });
    });

    describe('attempts', () => {
      it('begins one attempt per contact among many concurrent callers on several instances', async () => {
        const id = await campaign('running', contacts(1));
        const other = await open();
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            begin(i % 2 ? store : other, id, 1, { owner: `dialer-${i}`, nowMs: T0 + i }),
          ),
        );
        const won = results.filter((r) => r.ok);
        expect(won).toHaveLength(1);
        expect(results.filter((r) => !r.ok && r.reason === 'not_waiting')).toHaveLength(9);
        const contact = await store.getContact(id, 1);
        expect(contact).toMatchObject({ state: 'dialing', dials: 1 });
        expect(contact?.attempts).toHaveLength(1);
        expect(await store.openAttempts(id)).toHaveLength(1);
      });

      it('begins nothing unless the campaign runs', async () => {
        const id = await campaign('draft', contacts(1));
        expect(await begin(store, id, 1)).toEqual({ ok: false, reason: 'not_running' });
        await store.transitionCampaign(id, ['draft'], 'paused', {});
        expect(await begin(store, id, 1)).toEqual({ ok: false, reason: 'not_running' });
      });

      it('holds the cap on open attempts across instances', async () => {
        const id = await campaign('running', contacts(6));
        const other = await open();
        const on = (seq: number) =>
          begin(seq % 2 ? store : other, id, seq, { maxConcurrent: 4, nowMs: T0 + seq });
        // In time order (the pace lets one dial a millisecond), then two at once over the cap.
        for (const seq of [1, 2, 3, 4]) expect((await on(seq)).ok).toBe(true);
        const results = await Promise.all([5, 6].map(on));
        expect(results).toEqual([
          { ok: false, reason: 'cap' },
          { ok: false, reason: 'cap' },
        ]);
      });

      it('holds the pace: one dial per 1/cps, a late one keeping its slot, no burst after a lull', async () => {
        const id = await campaign('running', contacts(6));
        const at = (ms: number, seq: number) => begin(store, id, seq, { nowMs: T0 + ms, callsPerSecond: 2 });
        expect((await at(0, 1)).ok).toBe(true);
        expect(await at(0, 2)).toEqual({ ok: false, reason: 'pace', waitMs: 500 });
        expect(await at(250, 2)).toEqual({ ok: false, reason: 'pace', waitMs: 250 });
        // 30 ms late: the next slot is still 1000, not 1030.
        expect((await at(530, 2)).ok).toBe(true);
        expect(await at(990, 3)).toEqual({ ok: false, reason: 'pace', waitMs: 10 });
        expect((await at(1_000, 3)).ok).toBe(true);
        // A long lull starts the grid again: one dial, then one per half second.
        expect((await at(60_000, 4)).ok).toBe(true);
        expect(await at(60_000, 5)).toEqual({ ok: false, reason: 'pace', waitMs: 500 });
        expect((await at(60_500, 5)).ok).toBe(true);
        expect(await store.attemptsBegunSince(id, T0)).toBe(5);
        expect(await store.attemptsBegunSince(id, T0 + 1_000)).toBe(3);
      });

      it('never lets more than the pace into any one-second window, across instances, and keeps to the pace', async () => {
        // Invariant: whatever the timing of the callers, no sliding second holds more than
        // callsPerSecond dials (its whole part), and the rate over the run is never above the pace
        // and within 2% below it when callers come back when told.
        let seed = 7;
        const random = () => {
          seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
          return seed / 2 ** 31;
        };
        const other = await open();
        for (const cps of [5, 20, 2.5, 0.5]) {
          const id = await campaign('running', contacts(120));
          const dials: number[] = [];
          let now = T0;
          let seq = 1;
          while (seq <= 120) {
            // Two instances asking in turn, sometimes on time, sometimes a few ms late, sometimes early.
            const s = random() < 0.5 ? store : other;
            const result = await begin(s, id, seq, { nowMs: now, callsPerSecond: cps, maxConcurrent: 1_000 });
            if (result.ok) {
              dials.push(now);
              seq += 1;
              now += random() < 0.3 ? Math.floor(random() * 4) : 0;
            } else {
              expect(result).toMatchObject({ reason: 'pace' });
              const waitMs = result.ok === false && result.reason === 'pace' ? result.waitMs : 1;
              now += random() < 0.2 ? Math.floor(waitMs / 2) : waitMs + Math.floor(random() * 5);
            }
          }
          const most = Math.max(1, Math.floor(cps));
          for (let i = 0; i + most < dials.length; i++) {
            expect(dials[i + most]! - dials[i]!).toBeGreaterThanOrEqual(1_000);
          }
          const rate = ((dials.length - 1) * 1_000) / (dials.at(-1)! - dials[0]!);
          expect(rate).toBeLessThanOrEqual(cps);
          expect(rate).toBeGreaterThanOrEqual(Math.min(cps, most) * 0.98);
        }
      });

      it('records the call id, finds the attempt by it, and finishes it exactly once', async () => {
        const id = await campaign('running', contacts(1));
        const begun = await begin(store, id, 1, { from: '+12125550199' });
        if (!begun.ok) throw new Error(begun.reason);
        expect(begun.attempt).toMatchObject({
          campaignId: id,
          contactId: 1,
          to: '+12125550100',
          callSid: null,
        });
        expect(await store.recordCallSid(id, begun.attempt.id, 'CA-one')).toBe(true);
        const other = await open();
        expect(await other.findAttemptByCallSid('CA-one')).toMatchObject({
          id: begun.attempt.id,
          callSid: 'CA-one',
        });
        expect(await other.getOpenAttempt(id, begun.attempt.id)).toMatchObject({ callSid: 'CA-one' });
        expect((await store.getContact(id, 1))?.attempts[0]).toMatchObject({
          callSid: 'CA-one',
          from: '+12125550199',
        });

        const finish = (s: Store) =>
          s.finishAttempt({
            campaignId: id,
            attemptId: begun.attempt.id,
            nowMs: T0 + 30_000,
            result: {
              kind: 'counted',
              outcome: 'busy',
              details: { durationMs: 0, answeredBy: null, summary: null, reason: 'busy' },
            },
            next: { state: 'waiting', dueAtMs: T0 + 3_600_000 },
          });
        const [a, b] = await Promise.all([finish(store), finish(other)]);
        expect([a, b].filter((c) => c !== null)).toHaveLength(1);
        const contact = await store.getContact(id, 1);
        expect(contact).toMatchObject({ state: 'retry', dueAtMs: T0 + 3_600_000 });
        expect(contact?.attempts[0]).toMatchObject({
          outcome: 'busy',
          endedAtMs: T0 + 30_000,
          durationMs: 0,
        });
        expect(await store.findAttemptByCallSid('CA-one')).toBeNull();
        expect(await store.recordCallSid(id, begun.attempt.id, 'CA-late')).toBe(false);
        expect(await store.openAttempts(id)).toEqual([]);
        // Due again only when its time comes.
        expect(await store.leaseDueContacts(id, { nowMs: T0 + 60_000, limit: 5, leaseMs: 1_000 })).toEqual(
          [],
        );
        const due = await store.leaseDueContacts(id, { nowMs: T0 + 3_600_000, limit: 5, leaseMs: 1_000 });
        expect(due.map((c) => c.seq)).toEqual([1]);
      });

      it('ends a contact with its final outcome, counted in the tally', async () => {
        const id = await campaign('running', contacts(1));
        const begun = await begin(store, id, 1);
        if (!begun.ok) throw new Error(begun.reason);
        const done = await store.finishAttempt({
          campaignId: id,
          attemptId: begun.attempt.id,
          nowMs: T0,
          result: {
            kind: 'counted',
            outcome: 'voicemail_left',
            details: { answeredBy: 'machine', durationMs: 21_000 },
          },
          next: { state: 'done', outcome: 'voicemail_left' },
        });
        expect(done).toMatchObject({ state: 'done', outcome: 'voicemail_left' });
        expect((await store.contactTally(id)).outcomes.voicemail_left).toBe(1);
      });

      it('refunds an attempt the carrier refused: it does not count, the contact waits again', async () => {
        const id = await campaign('running', contacts(1));
        const begun = await begin(store, id, 1);
        if (!begun.ok) throw new Error(begun.reason);
        const after = await store.finishAttempt({
          campaignId: id,
          attemptId: begun.attempt.id,
          nowMs: T0,
          result: { kind: 'refunded', reason: 'carrier answered 503' },
          next: { state: 'waiting', dueAtMs: T0 + 30_000 },
        });
        expect(after).toMatchObject({
          state: 'pending',
          attempts: [],
          carrierErrors: 1,
          dials: 1,
          dueAtMs: T0 + 30_000,
        });
        const again = await begin(store, id, 1, { nowMs: T0 + 30_000 });
        expect(again.ok && again.attempt.id).not.toBe(begun.attempt.id);
      });

      it('hands an open attempt to one adopter, only from its current owner', async () => {
        const id = await campaign('running', contacts(1));
        const begun = await begin(store, id, 1, { owner: 'dead' });
        if (!begun.ok) throw new Error(begun.reason);
        const other = await open();
        const [a, b] = await Promise.all([
          store.adoptAttempt(id, begun.attempt.id, 'dead', 'alive-1'),
          other.adoptAttempt(id, begun.attempt.id, 'dead', 'alive-2'),
        ]);
        expect([a, b].sort()).toEqual([false, true]);
        const owner = (await store.getOpenAttempt(id, begun.attempt.id))?.owner;
        expect(['alive-1', 'alive-2']).toContain(owner);
        expect(await store.adoptAttempt(id, 'cmp_x.1.1', 'dead', 'alive-3')).toBe(false);
      });
    });

    describe('dial results', () => {
      it('counts results and failures since an instant, each id once', async () => {
        const id = await campaign('running');
        const now = Date.now();
        await store.recordDialResult(id, { id: 'a', atMs: now - 5_000, failed: false }, 60_000);
        await store.recordDialResult(id, { id: 'b', atMs: now - 3_000, failed: true }, 60_000);
        await store.recordDialResult(id, { id: 'b', atMs: now - 3_000, failed: true }, 60_000);
        await store.recordDialResult(id, { id: 'c', atMs: now - 1_000, failed: true }, 60_000);
        expect(await store.dialResultCounts(id, now - 10_000)).toEqual({ calls: 3, failures: 2 });
        expect(await store.dialResultCounts(id, now - 2_000)).toEqual({ calls: 1, failures: 1 });
        // Older than the kept span: dropped on the next record.
        await store.recordDialResult(id, { id: 'd', atMs: now, failed: false }, 2_000);
        expect(await store.dialResultCounts(id, 0)).toEqual({ calls: 2, failures: 1 });
      });
    });

    describe('dialer heartbeats', () => {
      it('knows a dialer alive until its heartbeat lapses on the dialer clock', async () => {
        const now = Date.now();
        await store.beatDialer('a', now, 60_000);
        await store.beatDialer('b', now, 20_000);
        const other = await open();
        expect(await other.liveDialers(['a', 'b', 'c'], now + 10_000)).toEqual(new Set(['a', 'b']));
        expect(await other.liveDialers(['a', 'b', 'c'], now + 30_000)).toEqual(new Set(['a']));
        expect(await other.liveDialers([], now)).toEqual(new Set());
      });

      it('forgets a heartbeat once it has lapsed on the store clock too', async () => {
        await store.beatDialer('short', Date.now(), 50);
        await sleep(120);
        // Whatever clock asks: a lapsed heartbeat is never alive again.
        expect(await store.liveDialers(['short'], Date.now())).toEqual(new Set());
      });
    });

    describe('do-not-call list', () => {
      it('adds, finds and removes numbers, shared across instances', async () => {
        expect(await store.addDoNotCall(['+12125550100', '+12125550101'], T0)).toBe(2);
        expect(await store.addDoNotCall(['+12125550101', '+12125550102'], T0 + 5)).toBe(1);
        const other = await open();
        expect(await other.getDoNotCall('+12125550101')).toEqual({ number: '+12125550101', addedAtMs: T0 });
        expect(await other.getDoNotCall('+12125550199')).toBeNull();
        expect(await other.removeDoNotCall('+12125550101')).toBe(true);
        expect(await store.removeDoNotCall('+12125550101')).toBe(false);
        expect(await store.getDoNotCall('+12125550101')).toBeNull();
        expect(await store.addDoNotCall([], T0)).toBe(0);
      });
    });

    it('replaces a request id with the call id the first callback brings, and keeps the first recorded otherwise', async () => {
      const id = await campaign('running', contacts(2));
      const begun = await begin(store, id, 1);
      if (!begun.ok) throw new Error(begun.reason);
      expect(await store.recordCallSid(id, begun.attempt.id, 'req-1')).toBe(true);
      // A second answer to the place request does not overwrite the first.
      expect(await store.recordCallSid(id, begun.attempt.id, 'req-2')).toBe(false);
      expect(await store.identifyCall(id, begun.attempt.id, 'call-1')).toBe(true);
      expect(await store.identifyCall(id, begun.attempt.id, 'call-1')).toBe(true);
      const other = await open();
      expect(await other.getOpenAttempt(id, begun.attempt.id)).toMatchObject({ callSid: 'call-1' });
      expect(await other.findAttemptByCallSid('call-1')).toMatchObject({ id: begun.attempt.id });
      expect(await other.findAttemptByCallSid('req-1')).toBeNull();
      expect((await other.openAttempts(id))[0]).toMatchObject({ callSid: 'call-1' });
      expect((await other.getContact(id, 1))?.attempts[0]).toMatchObject({ callSid: 'call-1' });
      // The carrier's late answer to the place request leaves the identified call alone.
      expect(await store.recordCallSid(id, begun.attempt.id, 'req-1')).toBe(false);
      expect(await store.getOpenAttempt(id, begun.attempt.id)).toMatchObject({ callSid: 'call-1' });

      // A callback that comes before the carrier's answer: the call id is set, the answer is kept out.
      const second = await begin(store, id, 2, { nowMs: T0 + 1 });
      if (!second.ok) throw new Error(second.reason);
      expect(await store.identifyCall(id, second.attempt.id, 'call-2')).toBe(true);
      expect(await store.recordCallSid(id, second.attempt.id, 'req-2')).toBe(false);
      expect(await store.findAttemptByCallSid('call-2')).toMatchObject({ id: second.attempt.id });

      await store.finishAttempt({
        campaignId: id,
        attemptId: begun.attempt.id,
        nowMs: T0 + 30_000,
        result: { kind: 'counted', outcome: 'completed', details: { durationMs: 12_000 } },
        next: { state: 'done', outcome: 'completed' },
      });
      expect((await store.getContact(id, 1))?.attempts[0]).toMatchObject({
        callSid: 'call-1',
        outcome: 'completed',
      });
      expect(await store.identifyCall(id, begun.attempt.id, 'call-late')).toBe(false);
      expect(await store.identifyCall(id, `${id}.9.1`, 'call-none')).toBe(false);
      expect(await store.findAttemptByCallSid('call-late')).toBeNull();
    });

    it('keeps campaigns, contacts, attempts and the list when the store is opened again', async () => {
      const id = await campaign('running', contacts(2));
      const begun = await begin(store, id, 1);
      if (!begun.ok) throw new Error(begun.reason);
      await store.recordCallSid(id, begun.attempt.id, 'CA-kept');
      await store.addDoNotCall(['+12125550199'], T0);
      await store.close();
      store = await open();
      expect((await store.getCampaign(id))?.state).toBe('running');
      expect(await store.findAttemptByCallSid('CA-kept')).toMatchObject({ id: begun.attempt.id });
      expect((await store.contactTally(id)).states).toMatchObject({ dialing: 1, pending: 1 });
      expect(await store.getDoNotCall('+12125550199')).not.toBeNull();
    });
  });
}
