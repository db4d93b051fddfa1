// The store contract, run against every adapter (sqlite.test.ts, redis.test.ts). `open()` may be
// called several times: each call is one more process or instance over the same state.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { CLOCK_SKEW_ALLOWANCE_MS, type StoreLimits } from '../../src/store/limits.js';
import type { Store } from '../../src/store/store.js';
import { callRecordFixture } from '../helpers/call-record.js';

export interface StoreHarness {
  /** A store over the shared state, with `limits` over the defaults; every one opened is closed by the suite. */
  open(limits?: Partial<StoreLimits>): Promise<Store>;
  /** Removes the state (called after each test). */
  cleanup(): Promise<void>;
}

const PAYLOAD = {
  text: 'café 🚀 "quoted" \\ \u0000 end',
  nested: { list: [1, 2.5, null, true], empty: {}, none: [] },
};

const DAY_MS = 24 * 60 * 60_000;

/** A call that ended normally, started `startedMs` (an hour ago unless given), with every field set. */
function callRecord(callSid: string, startedMs = Date.now() - 60 * 60_000, extra: Partial<CallRecord> = {}) {
  return callRecordFixture(callSid, {
    startedMs,
    durationMs: 42_000,
    bargeIns: 1,
    turns: [
      { role: 'user', content: 'café 🚀 "quoted" \\ end', interrupted: false, atMs: 1_200 },
      {
        role: 'assistant',
        content: 'Sure, let me',
        generated: 'Sure, let me check that for you.',
        interrupted: true,
        sentMs: 1_800,
        heardMs: 1_100,
        atMs: 2_000,
      },
    ],
    functionCalls: [
      { name: 'lookup_order', arguments: '{"id":"A-1"}', outcome: 'ok', durationMs: 85, atMs: 2_500 },
    ],
    latency: { firstAudioMs: 640, agentConnectMs: null, agentReportedMs: [410, 388.5], perceivedMs: [] },
    prewarmed: true,
    ...extra,
  });
}
export function storeContract(name: string, harness: () => Promise<StoreHarness>): void {
  describe(`${name} store contract`, () => {
    let h: StoreHarness;
    let opened: Store[];
    let store: Store;

    const open = async (limits?: Partial<StoreLimits>) => {
      const s = await h.open(limits);
      opened.push(s);
      return s;
    };

    beforeEach(async () => {
      h = await harness();
      opened = [];
      store = await open();
    });
    afterEach(async () => {
      for (const s of opened) await s.close();
      await h.cleanup();
    });

    describe('outbound contexts', () => {
      it('keeps a context for every instance until its lifetime ends, then forgets it', async () => {
        // A context kept by the instance that placed the call is read by whichever instance takes
        // its webhooks, and never past its lifetime.
        const other = await open();
        const value = JSON.stringify({ variables: { name: 'Zoë "Ω" \\ 🚀' } });
        await store.putOutboundContext('ctx-1', value, 150);
        expect(await other.getOutboundContext('ctx-1')).toBe(value);
        expect(await other.getOutboundContext('ctx-unknown')).toBeNull();
        await sleep(250);
        expect(await other.getOutboundContext('ctx-1')).toBeNull();
        expect(await store.getOutboundContext('ctx-1')).toBeNull();
      });
    });

    describe('claimOnce', () => {
      it('grants the first claim only, until its validity and the clock-skew allowance have passed', async () => {
        const skewed = await open({ clockSkewAllowanceMs: 300 });
        expect(await skewed.claimOnce('token-1', 60)).toBe(true);
        expect(await skewed.claimOnce('token-1', 60)).toBe(false);
        expect(await skewed.claimOnce('token-2', 60)).toBe(true);
        await sleep(110);
        expect(await skewed.claimOnce('token-1', 60)).toBe(false);
        await sleep(350);
        expect(await skewed.claimOnce('token-1', 60)).toBe(true);
      });

      it('refuses a replay on an instance whose clock lags the issuer by less than the allowance', async () => {
        // A token valid for 80 ms by its issuer's clock is still valid on an instance whose clock
        // lags by four minutes long after those 80 ms: its claim must stand as long.
        const validForMs = 80;
        const issuedAtMs = Date.now();
        const lagMs = 4 * 60_000;
        expect(lagMs).toBeLessThan(CLOCK_SKEW_ALLOWANCE_MS);
        const validOnLaggingInstance = () => Date.now() - lagMs < issuedAtMs + validForMs;

        const other = await open();
        expect(await store.claimOnce('nonce-skew', validForMs)).toBe(true);
        await sleep(validForMs + 50);
        expect(validOnLaggingInstance()).toBe(true);
        expect(await other.claimOnce('nonce-skew', validForMs)).toBe(false);

        // Without the allowance the replay would have been granted: the test bites.
        const unskewed = await open({ clockSkewAllowanceMs: 0 });
        expect(await unskewed.claimOnce('nonce-unskewed', validForMs)).toBe(true);
        await sleep(validForMs + 50);
        expect(await unskewed.claimOnce('nonce-unskewed', validForMs)).toBe(true);
      });
    });

    describe('idempotency keys', () => {
      it('claims, answers in progress to a second claimant, then done once committed', async () => {
        const first = await store.claimIdempotencyKey('code:d-1', 60_000);
        expect(first.status).toBe('claimed');
        expect(await store.claimIdempotencyKey('code:d-1', 60_000)).toEqual({ status: 'in_progress' });
        if (first.status !== 'claimed') throw new Error('unreachable');
        await store.commitIdempotencyKey('code:d-1', first.token, 60_000);
        expect(await store.claimIdempotencyKey('code:d-1', 60_000)).toEqual({ status: 'done' });
      });

      it('lets exactly one of many concurrent claimants have the key', async () => {
        const other = await open();
        const claims = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            (i % 2 ? store : other).claimIdempotencyKey('tasks:d-2', 60_000),
          ),
        );
        expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
        expect(claims.filter((c) => c.status === 'in_progress')).toHaveLength(11);
      });

      it('makes a released key claimable again; a wrong token releases nothing', async () => {
        const first = await store.claimIdempotencyKey('deploy:e-1', 60_000);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await store.releaseIdempotencyKey('deploy:e-1', 'someone-else');
        expect((await store.claimIdempotencyKey('deploy:e-1', 60_000)).status).toBe('in_progress');
        await store.releaseIdempotencyKey('deploy:e-1', first.token);
        expect((await store.claimIdempotencyKey('deploy:e-1', 60_000)).status).toBe('claimed');
      });

      it('never releases a committed key', async () => {
        const first = await store.claimIdempotencyKey('deploy:e-2', 60_000);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await store.commitIdempotencyKey('deploy:e-2', first.token, 60_000);
        await store.releaseIdempotencyKey('deploy:e-2', first.token);
        expect(await store.claimIdempotencyKey('deploy:e-2', 60_000)).toEqual({ status: 'done' });
      });

      it('lets an abandoned in-progress claim lapse, and a stale owner cannot commit over the new one', async () => {
        const stale = await store.claimIdempotencyKey('inbox:m-1', 60);
        if (stale.status !== 'claimed') throw new Error('expected a claim');
        await sleep(110);
        const fresh = await store.claimIdempotencyKey('inbox:m-1', 60_000);
        expect(fresh.status).toBe('claimed');
        await store.commitIdempotencyKey('inbox:m-1', stale.token, 60_000);
        expect(await store.claimIdempotencyKey('inbox:m-1', 60_000)).toEqual({ status: 'in_progress' });
      });

      it('forgets a done key after its window', async () => {
        const first = await store.claimIdempotencyKey('payments:evt-1', 60_000);
        if (first.status !== 'claimed') throw new Error('expected a claim');
        await store.commitIdempotencyKey('payments:evt-1', first.token, 60);
        await sleep(110);
        expect((await store.claimIdempotencyKey('payments:evt-1', 60_000)).status).toBe('claimed');
      });
    });

    describe('window counters', () => {
      it('counts within a window opened by the first hit, per key', async () => {
        expect(await store.readWindowCounter('ip:198.51.100.7')).toBeNull();
        const before = Date.now();
        const first = await store.incrementWindowCounter('ip:198.51.100.7', 60_000);
        expect(first.count).toBe(1);
        expect(first.resetAtMs).toBeGreaterThanOrEqual(before + 59_000);
        expect(first.resetAtMs).toBeLessThanOrEqual(Date.now() + 60_000);
        await store.incrementWindowCounter('ip:198.51.100.7', 60_000);
        const third = await store.incrementWindowCounter('ip:198.51.100.7', 60_000);
        expect(third.count).toBe(3);
        expect(Math.abs(third.resetAtMs - first.resetAtMs)).toBeLessThan(1_000);
        expect((await store.readWindowCounter('ip:198.51.100.7'))?.count).toBe(3);
        expect(await store.readWindowCounter('ip:203.0.113.9')).toBeNull();
      });

      it('loses no hit under concurrency, across instances', async () => {
        const other = await open();
        await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 ? store : other).incrementWindowCounter('ip:c', 60_000),
          ),
        );
        expect((await store.readWindowCounter('ip:c'))?.count).toBe(30);
      });

      it('starts again from zero once the window has passed', async () => {
        await store.incrementWindowCounter('ip:w', 60);
        await store.incrementWindowCounter('ip:w', 60);
        await sleep(110);
        expect(await store.readWindowCounter('ip:w')).toBeNull();
        expect((await store.incrementWindowCounter('ip:w', 60)).count).toBe(1);
      });
    });

    describe('event queue', () => {
      const input = (n: number) => ({
        name: 'code/workflow_run.completed',
        provider: 'code',
        idempotencyKey: `code:d-${n}`,
        payload: { ...PAYLOAD, n },
      });

      it('hands out events in order, with their payload intact, one consumer at a time', async () => {
        const ids = [await store.enqueueEvent(input(1)), await store.enqueueEvent(input(2))];
        const first = await store.claimNextEvent('consumer-a', 60_000);
        expect(first).toMatchObject({ id: ids[0], ...input(1), attempts: 1, lastError: null });
        expect(first?.payload).toEqual({ ...PAYLOAD, n: 1 });
        const second = await store.claimNextEvent('consumer-b', 60_000);
        expect(second?.id).toBe(ids[1]);
        expect(await store.claimNextEvent('consumer-c', 60_000)).toBeNull();
      });

      it('gives each event to one of several concurrent consumers on several instances', async () => {
        const other = await open();
        const ids = new Set<string>();
        for (let n = 0; n < 6; n++) ids.add(await store.enqueueEvent(input(n)));
        const claims = await Promise.all(
          Array.from({ length: 14 }, (_, i) =>
            (i % 2 ? store : other).claimNextEvent(`consumer-${i}`, 60_000),
          ),
        );
        const got = claims.filter((c) => c !== null).map((c) => c.id);
        expect(got).toHaveLength(6);
        expect(new Set(got)).toEqual(ids);
      });

      it('removes an acked event', async () => {
        await store.enqueueEvent(input(1));
        const claimed = await store.claimNextEvent('a', 60_000);
        if (!claimed) throw new Error('expected an event');
        expect((await store.queueStats()).depth).toBe(1);
        await store.ackEvent(claimed);
        expect(await store.queueStats()).toEqual({ depth: 0, oldestAgeMs: null, deadLetters: 0 });
        expect(await store.claimNextEvent('a', 1)).toBeNull();
      });

      it('holds a retried event back for its delay, then hands it out with one more attempt', async () => {
        await store.enqueueEvent(input(1));
        const claimed = await store.claimNextEvent('a', 60_000);
        if (!claimed) throw new Error('expected an event');
        await store.retryEventLater(claimed, 150, 'operator gateway answered 502');
        expect(await store.claimNextEvent('a', 60_000)).toBeNull();
        expect((await store.queueStats()).depth).toBe(1);
        await sleep(220);
        const again = await store.claimNextEvent('b', 60_000);
        expect(again).toMatchObject({
          id: claimed.id,
          attempts: 2,
          lastError: 'operator gateway answered 502',
        });
      });

      it("hands a crashed consumer's event to another once its lease has lapsed", async () => {
        await store.enqueueEvent(input(1));
        const lost = await store.claimNextEvent('crashed', 80);
        expect(await store.claimNextEvent('survivor', 80)).toBeNull();
        await sleep(150);
        const taken = await store.claimNextEvent('survivor', 80);
        expect(taken?.id).toBe(lost?.id);
        expect(taken?.attempts).toBe(2);
      });

      it('keeps dead letters apart, lists them newest first and requeues one once', async () => {
        for (const n of [1, 2]) {
          await store.enqueueEvent(input(n));
          const claimed = await store.claimNextEvent('a', 60_000);
          if (!claimed) throw new Error('expected an event');
          await store.deadLetterEvent(claimed, `failed ${n}`);
          await sleep(5);
        }
        expect(await store.queueStats()).toEqual({ depth: 0, oldestAgeMs: null, deadLetters: 2 });
        expect(await store.claimNextEvent('a', 60_000)).toBeNull();
        const letters = await store.listDeadLetters(10);
        expect(letters.map((l) => l.idempotencyKey)).toEqual(['code:d-2', 'code:d-1']);
        expect(letters[0]).toMatchObject({
          attempts: 1,
          lastError: 'failed 2',
          payload: { ...PAYLOAD, n: 2 },
        });
        expect(await store.listDeadLetters(1)).toHaveLength(1);

        const target = letters[1]!;
        const [won, lost] = await Promise.all([
          store.retryDeadLetter(target.id),
          store.retryDeadLetter(target.id),
        ]);
        expect([won, lost].sort()).toEqual([false, true]);
        expect(await store.retryDeadLetter('no-such-id')).toBe(false);
        expect((await store.queueStats()).deadLetters).toBe(1);
        const requeued = await store.claimNextEvent('a', 60_000);
        expect(requeued).toMatchObject({ id: target.id, idempotencyKey: 'code:d-1', attempts: 1 });
      });

      it('reports depth and the age of the oldest waiting event', async () => {
        await store.enqueueEvent(input(1));
        await sleep(60);
        await store.enqueueEvent(input(2));
        const stats = await store.queueStats();
        expect(stats.depth).toBe(2);
        expect(stats.oldestAgeMs).toBeGreaterThanOrEqual(50);
        expect(stats.oldestAgeMs).toBeLessThan(5_000);
      });
    });
    describe('analysis jobs', () => {
      const job = (callSid: string, text = PAYLOAD.text) => ({
        callSid,
        language: 'en-US',
        text,
        truncated: false,
      });

      it('queues one job per call and hands it out with its text intact', async () => {
        expect(await store.enqueueAnalysisJob(job('CA-1'), 10)).toBe('queued');
        expect(await store.enqueueAnalysisJob({ ...job('CA-1'), text: 'other' }, 10)).toBe('duplicate');
        expect(await store.analysisJobCount()).toBe(1);
        const claimed = await store.claimAnalysisJob('worker-a', 60_000);
        expect(claimed).toMatchObject({ ...job('CA-1'), attempts: 1, lastError: null });
        expect(claimed?.text).toBe(PAYLOAD.text);
        expect(claimed?.enqueuedAtMs).toBeGreaterThan(Date.now() - 60_000);
        expect(await store.claimAnalysisJob('worker-b', 60_000)).toBeNull();
        // In progress still counts, and still blocks a duplicate.
        expect(await store.analysisJobCount()).toBe(1);
        expect(await store.enqueueAnalysisJob(job('CA-1'), 10)).toBe('duplicate');
      });

      it('refuses a job past the bound, and takes one again once a job is done', async () => {
        expect(await store.enqueueAnalysisJob(job('CA-1'), 2)).toBe('queued');
        expect(await store.enqueueAnalysisJob(job('CA-2'), 2)).toBe('queued');
        expect(await store.enqueueAnalysisJob(job('CA-3'), 2)).toBe('full');
        const claimed = await store.claimAnalysisJob('a', 60_000);
        if (!claimed) throw new Error('expected a job');
        expect(claimed.callSid).toBe('CA-1');
        await store.completeAnalysisJob(claimed);
        expect(await store.enqueueAnalysisJob(job('CA-3'), 2)).toBe('queued');
        expect(await store.analysisJobCount()).toBe(2);
      });

      it('gives each job to one of several concurrent consumers on several instances', async () => {
        const other = await open();
        for (let n = 0; n < 5; n++) await store.enqueueAnalysisJob(job(`CA-${n}`), 100);
        const claims = await Promise.all(
          Array.from({ length: 12 }, (_, i) => (i % 2 ? store : other).claimAnalysisJob(`w-${i}`, 60_000)),
        );
        const got = claims.filter((c) => c !== null).map((c) => c.callSid);
        expect(got.sort()).toEqual(['CA-0', 'CA-1', 'CA-2', 'CA-3', 'CA-4']);
      });

      it('holds a retried job back for its delay, then hands it out with one more attempt', async () => {
        await store.enqueueAnalysisJob(job('CA-1'), 10);
        const claimed = await store.claimAnalysisJob('a', 60_000);
        if (!claimed) throw new Error('expected a job');
        await store.retryAnalysisJobLater(claimed, 150, 'speech service answered 503');
        expect(await store.claimAnalysisJob('a', 60_000)).toBeNull();
        expect(await store.analysisJobCount()).toBe(1);
        await sleep(220);
        expect(await store.claimAnalysisJob('b', 60_000)).toMatchObject({
          callSid: 'CA-1',
          attempts: 2,
          lastError: 'speech service answered 503',
        });
      });

      it("hands a crashed consumer's job to another once its lease lapses, and ignores the stale retry", async () => {
        await store.enqueueAnalysisJob(job('CA-1'), 10);
        const lost = await store.claimAnalysisJob('crashed', 80);
        if (!lost) throw new Error('expected a job');
        expect(await store.claimAnalysisJob('survivor', 80)).toBeNull();
        await sleep(150);
        const taken = await store.claimAnalysisJob('survivor', 60_000);
        expect(taken).toMatchObject({ callSid: 'CA-1', attempts: 2 });
        // The first consumer wakes up and puts the job back: it no longer holds it, so nothing moves.
        await store.retryAnalysisJobLater(lost, 0, 'stale');
        expect(await store.claimAnalysisJob('third', 60_000)).toBeNull();
      });

      it('forgets a completed job for good, even when a retry comes after', async () => {
        await store.enqueueAnalysisJob(job('CA-1'), 10);
        const claimed = await store.claimAnalysisJob('a', 60_000);
        if (!claimed) throw new Error('expected a job');
        await store.completeAnalysisJob(claimed);
        await store.retryAnalysisJobLater(claimed, 0, 'late');
        expect(await store.analysisJobCount()).toBe(0);
        expect(await store.claimAnalysisJob('a', 60_000)).toBeNull();
        // The call may be analysed again later (a replaced record): the key is free.
        expect(await store.enqueueAnalysisJob(job('CA-1'), 10)).toBe('queued');
      });

      it('keeps queued jobs across a restart: a new instance over the same state finds them', async () => {
        // A restart between a call's end and its analysis must lose no analysis, waiting or in progress.
        await store.enqueueAnalysisJob(job('CA-leased'), 10);
        expect((await store.claimAnalysisJob('dying', 80))?.callSid).toBe('CA-leased');
        await store.enqueueAnalysisJob(job('CA-queued', 'Caller: hello.'), 10);
        await store.close();
        const restarted = await open();
        expect(await restarted.analysisJobCount()).toBe(2);
        expect(await restarted.claimAnalysisJob('after', 60_000)).toMatchObject({
          callSid: 'CA-queued',
          text: 'Caller: hello.',
          attempts: 1,
        });
        // The job the dead instance held comes back once its lease lapses.
        await sleep(150);
        expect(await restarted.claimAnalysisJob('after', 60_000)).toMatchObject({
          callSid: 'CA-leased',
          attempts: 2,
        });
      });
    });

    describe('event queue bounds', () => {
      const input = (n: number) => ({
        name: 'code/workflow_run.completed',
        provider: 'code',
        idempotencyKey: `code:b-${n}`,
        payload: { n },
      });
      const full = { code: 'CALLBRIDGE_QUEUE_FULL', statusCode: 503 };

      it('refuses events past its limit, counting delayed and in-flight ones, until one leaves', async () => {
        const small = await open({ maxQueuedEvents: 3 });
        for (const n of [1, 2, 3]) await small.enqueueEvent(input(n));
        await expect(small.enqueueEvent(input(4))).rejects.toMatchObject(full);

        const inFlight = await small.claimNextEvent('a', 60_000);
        if (!inFlight) throw new Error('expected an event');
        await small.retryEventLater(inFlight, 60_000, 'later');
        await expect(small.enqueueEvent(input(4))).rejects.toMatchObject(full);
        expect((await small.queueStats()).depth).toBe(3);

        const next = await small.claimNextEvent('a', 60_000);
        if (!next) throw new Error('expected an event');
        await small.ackEvent(next);
        await small.enqueueEvent(input(4));
        await expect(small.enqueueEvent(input(5))).rejects.toMatchObject(full);
      });

      it('refuses to requeue a dead letter into a full queue, and keeps the letter', async () => {
        const small = await open({ maxQueuedEvents: 1 });
        await small.enqueueEvent(input(1));
        const claimed = await small.claimNextEvent('a', 60_000);
        if (!claimed) throw new Error('expected an event');
        await small.deadLetterEvent(claimed, 'failed');
        await small.enqueueEvent(input(2));
        await expect(small.retryDeadLetter(claimed.id)).rejects.toMatchObject(full);
        expect((await small.listDeadLetters(10)).map((l) => l.id)).toEqual([claimed.id]);
      });

      it('keeps the newest dead letters up to its limit', async () => {
        const small = await open({ maxDeadLetters: 2 });
        const ids: string[] = [];
        for (const n of [1, 2, 3]) {
          await small.enqueueEvent(input(n));
          const claimed = await small.claimNextEvent('a', 60_000);
          if (!claimed) throw new Error('expected an event');
          await small.deadLetterEvent(claimed, `failed ${n}`);
          ids.push(claimed.id);
          await sleep(5);
        }
        expect((await small.listDeadLetters(10)).map((l) => l.id)).toEqual([ids[2], ids[1]]);
        expect((await small.queueStats()).deadLetters).toBe(2);
        expect(await small.retryDeadLetter(ids[0]!)).toBe(false);
      });

      it('forgets dead letters past their retention', async () => {
        const brief = await open({ deadLetterRetentionMs: 300 });
        await brief.enqueueEvent(input(1));
        const first = await brief.claimNextEvent('a', 60_000);
        if (!first) throw new Error('expected an event');
        await brief.deadLetterEvent(first, 'failed');
        expect(await brief.listDeadLetters(10)).toHaveLength(1);
        await sleep(400);
        expect(await brief.listDeadLetters(10)).toEqual([]);
        expect((await brief.queueStats()).deadLetters).toBe(0);

        await brief.enqueueEvent(input(2));
        const second = await brief.claimNextEvent('a', 60_000);
        if (!second) throw new Error('expected an event');
        await brief.deadLetterEvent(second, 'failed');
        expect((await brief.listDeadLetters(10)).map((l) => l.id)).toEqual([second.id]);
        expect(await brief.retryDeadLetter(first.id)).toBe(false);
      });
    });

    describe('provider verifications', () => {
      it('keeps the latest verified time per provider', async () => {
        expect(await store.providerVerifiedTimes()).toEqual({});
        await store.markProviderVerified('code', 2_000);
        await store.markProviderVerified('code', 1_000);
        await store.markProviderVerified('tasks', 1_500);
        expect(await store.providerVerifiedTimes()).toEqual({ code: 2_000, tasks: 1_500 });
      });
    });

    describe('call records', () => {
      const sids = (calls: CallRecord[]) => calls.map((c) => c.callSid);
      /** Follows the cursor to the end; every page but the last holds `limit` calls here. */
      const allPages = async (query: { limit: number; outcome?: 'completed' | 'failed' }) => {
        const pages: string[][] = [];
        let cursor: string | undefined;
        do {
          const page = await store.listCallRecords({ ...query, ...(cursor ? { cursor } : {}) });
          pages.push(sids(page.calls));
          cursor = page.nextCursor ?? undefined;
        } while (cursor && pages.length < 50);
        return pages;
      };

      it('gives back every field of a saved record; an unknown callSid is null', async () => {
        const record = callRecord('CA-round-trip');
        await store.saveCallRecord(record);
        expect(await store.getCallRecord('CA-round-trip')).toEqual(record);
        expect(await store.getCallRecord('CA-unknown')).toBeNull();
      });

      it('keeps the recording of a recorded call: state, duration, size and pauses', async () => {
        const record = callRecord('CA-recorded', Date.now() - 60_000, {
          recording: {
            state: 'ready',
            durationMs: 61_240,
            bytes: 1_959_724,
            pauses: [{ atMs: 20_500, durationMs: 8_000 }],
          },
        });
        await store.saveCallRecord(record);
        expect((await store.getCallRecord('CA-recorded'))?.recording).toEqual(record.recording);
        expect((await store.listCallRecords({ limit: 10 })).calls[0]?.recording).toEqual(record.recording);
      });

      it('replaces a record saved again under the same callSid, in lookups and in listings', async () => {
        const t = Date.now() - 60 * 60_000;
        await store.saveCallRecord(callRecord('CA-again', t));
        const replaced = callRecord('CA-again', t + 5_000, { outcome: 'failed', endReason: 'agent_error' });
        await store.saveCallRecord(replaced);
        expect(await store.getCallRecord('CA-again')).toEqual(replaced);
        expect(await store.listCallRecords({ limit: 10 })).toEqual({ calls: [replaced], nextCursor: null });
        expect((await store.listCallRecords({ limit: 10, outcome: 'completed' })).calls).toEqual([]);
      });

      it('lists newest first by startedAt as an instant, ties broken by callSid', async () => {
        const t = Date.now() - 60 * 60_000;
        await store.saveCallRecord(callRecord('CA-old', t - 60_000));
        await store.saveCallRecord(callRecord('CA-tie-a', t));
        await store.saveCallRecord(callRecord('CA-new', t + 60_000));
        await store.saveCallRecord(callRecord('CA-tie-b', t));
        // Written with a UTC offset: 30 s after `t`, though its text sorts before the others'.
        const offset = callRecord('CA-offset', t + 30_000);
        const local = new Date(t + 30_000 + 2 * 60 * 60_000).toISOString().replace('Z', '+02:00');
        await store.saveCallRecord({ ...offset, startedAt: local });
        const page = await store.listCallRecords({ limit: 10 });
        expect(sids(page.calls)).toEqual(['CA-new', 'CA-offset', 'CA-tie-b', 'CA-tie-a', 'CA-old']);
        expect(page.nextCursor).toBeNull();
        expect(page.calls[1]?.startedAt).toBe(local);
      });

      it('filters on since (inclusive), until (exclusive), outcome and endReason', async () => {
        const t = Date.now() - 60 * 60_000;
        const at = (s: number) => new Date(t + s * 1_000).toISOString();
        await store.saveCallRecord(callRecord('CA-1', t + 1_000));
        await store.saveCallRecord(
          callRecord('CA-2', t + 2_000, { outcome: 'failed', endReason: 'agent_error' }),
        );
        await store.saveCallRecord(callRecord('CA-3', t + 3_000, { endReason: 'agent_hangup' }));
        await store.saveCallRecord(
          callRecord('CA-4', t + 4_000, { outcome: 'failed', endReason: 'agent_error' }),
        );
        const list = async (query: Omit<Parameters<Store['listCallRecords']>[0], 'limit'>) =>
          sids((await store.listCallRecords({ limit: 10, ...query })).calls);

        expect(await list({ since: at(2) })).toEqual(['CA-4', 'CA-3', 'CA-2']);
        expect(await list({ until: at(3) })).toEqual(['CA-2', 'CA-1']);
        expect(await list({ since: at(2), until: at(4) })).toEqual(['CA-3', 'CA-2']);
        expect(await list({ outcome: 'failed' })).toEqual(['CA-4', 'CA-2']);
        expect(await list({ outcome: 'completed' })).toEqual(['CA-3', 'CA-1']);
        expect(await list({ endReason: 'agent_hangup' })).toEqual(['CA-3']);
        expect(await list({ endReason: 'agent_error', until: at(4) })).toEqual(['CA-2']);
        expect(await list({ endReason: 'no_such_reason' })).toEqual([]);
      });

      it('pages through 25 records 10 at a time, each exactly once and in order, across equal start times', async () => {
        const t = Date.now() - 60 * 60_000;
        // Three calls per second, so page boundaries fall inside groups of equal startedAt.
        const records = Array.from({ length: 25 }, (_, i) =>
          callRecord(`CA-${String(i).padStart(2, '0')}`, t + Math.floor(i / 3) * 1_000),
        );
        for (const record of records) await store.saveCallRecord(record);
        const expected = sids(records).reverse();
        const pages = await allPages({ limit: 10 });
        expect(pages).toEqual([expected.slice(0, 10), expected.slice(10, 20), expected.slice(20)]);
      });

      it('pages through a filtered listing without losing or repeating a match', async () => {
        const t = Date.now() - 60 * 60_000;
        for (let i = 0; i < 25; i++) {
          const outcome = i % 3 === 0 ? 'failed' : 'completed';
          await store.saveCallRecord(
            callRecord(`CA-${String(i).padStart(2, '0')}`, t + i * 1_000, { outcome }),
          );
        }
        const failed = ['CA-24', 'CA-21', 'CA-18', 'CA-15', 'CA-12', 'CA-09', 'CA-06', 'CA-03', 'CA-00'];
        expect(await allPages({ limit: 4, outcome: 'failed' })).toEqual([
          failed.slice(0, 4),
          failed.slice(4, 8),
          failed.slice(8),
        ]);
        expect(await allPages({ limit: 9, outcome: 'failed' })).toEqual([failed]);
      });

      it('finds sparse matches far down the listing', async () => {
        const t = Date.now() - 60 * 60_000;
        for (let i = 0; i < 230; i++) {
          const outcome = i < 3 ? 'failed' : 'completed';
          await store.saveCallRecord(
            callRecord(`CA-${String(i).padStart(3, '0')}`, t + i * 1_000, { outcome }),
          );
        }
        expect(await allPages({ limit: 2, outcome: 'failed' })).toEqual([['CA-002', 'CA-001'], ['CA-000']]);
      });

      it('keeps later pages steady while calls are saved between fetches', async () => {
        const t = Date.now() - 60 * 60_000;
        const records = Array.from({ length: 25 }, (_, i) =>
          callRecord(`CA-${String(i).padStart(2, '0')}`, t + i * 1_000),
        );
        for (const record of records) await store.saveCallRecord(record);
        const expected = sids(records).reverse();

        const first = await store.listCallRecords({ limit: 10 });
        expect(sids(first.calls)).toEqual(expected.slice(0, 10));
        await store.saveCallRecord(callRecord('CA-newest', t + 60_000));
        await store.saveCallRecord(callRecord('CA-between', t + 20_500));
        const second = await store.listCallRecords({ limit: 10, cursor: first.nextCursor ?? '' });
        expect(sids(second.calls)).toEqual(expected.slice(10, 20));
        const third = await store.listCallRecords({ limit: 10, cursor: second.nextCursor ?? '' });
        expect(sids(third.calls)).toEqual(expected.slice(20));
        expect(third.nextCursor).toBeNull();
      });

      it('pages through calls started days and weeks apart', async () => {
        const t = Date.now();
        const ages = [60 * 60_000, 2 * DAY_MS, 10 * DAY_MS, 40 * DAY_MS, 88 * DAY_MS];
        for (const [i, age] of ages.entries()) await store.saveCallRecord(callRecord(`CA-day-${i}`, t - age));
        expect(await allPages({ limit: 1 })).toEqual(ages.map((_, i) => [`CA-day-${i}`]));
        expect(await allPages({ limit: 2 })).toEqual([
          ['CA-day-0', 'CA-day-1'],
          ['CA-day-2', 'CA-day-3'],
          ['CA-day-4'],
        ]);
      });

      it('answers bounds far in the past or future without walking every day between', async () => {
        await store.saveCallRecord(callRecord('CA-bounds'));
        const list = (query: { since?: string; until?: string }) =>
          store.listCallRecords({ limit: 10, ...query }).then((page) => sids(page.calls));
        expect(await list({ until: '9999-12-31T00:00:00Z' })).toEqual(['CA-bounds']);
        expect(await list({ since: '1970-01-01T00:00:00Z' })).toEqual(['CA-bounds']);
        expect(await list({ until: '1970-01-02T00:00:00Z' })).toEqual([]);
        expect(await list({ since: '9999-12-31T00:00:00Z' })).toEqual([]);
      });

      it('rejects a cursor it did not hand out, and a bound that is not a date, as a bad request', async () => {
        await store.saveCallRecord(callRecord('CA-1'));
        const bad = { code: 'CALLBRIDGE_BAD_REQUEST', statusCode: 400 };
        for (const cursor of ['not a cursor', 'bm90LWpzb24', '', 'x'.repeat(5_000)]) {
          await expect(store.listCallRecords({ limit: 10, cursor })).rejects.toMatchObject(bad);
        }
        await expect(store.listCallRecords({ limit: 10, since: 'yesterday' })).rejects.toMatchObject(bad);
        await expect(store.listCallRecords({ limit: 0 })).rejects.toMatchObject(bad);
      });

      it('keeps records for 90 days from their start', async () => {
        await store.saveCallRecord(callRecord('CA-89-days', Date.now() - 89 * DAY_MS));
        await store.saveCallRecord(callRecord('CA-91-days', Date.now() - 91 * DAY_MS));
        expect(await store.getCallRecord('CA-89-days')).not.toBeNull();
        expect(await store.getCallRecord('CA-91-days')).toBeNull();
        expect(sids((await store.listCallRecords({ limit: 10 })).calls)).toEqual(['CA-89-days']);

        // Moving a kept record's start out of the retention period removes it.
        await store.saveCallRecord(callRecord('CA-89-days', Date.now() - 91 * DAY_MS));
        expect(await store.getCallRecord('CA-89-days')).toBeNull();
        expect((await store.listCallRecords({ limit: 10 })).calls).toEqual([]);
      });

      it('shares records across instances and keeps them when the store is opened again', async () => {
        const record = callRecord('CA-kept');
        await store.saveCallRecord(record);
        const other = await open();
        expect(await other.getCallRecord('CA-kept')).toEqual(record);
        await store.close();
        store = await open();
        expect(await store.getCallRecord('CA-kept')).toEqual(record);
        expect((await store.listCallRecords({ limit: 10 })).calls).toEqual([record]);
      });
    });

    it('keeps everything when the store is closed and opened again', async () => {
      const claim = await store.claimIdempotencyKey('code:kept', 60_000);
      if (claim.status !== 'claimed') throw new Error('expected a claim');
      await store.commitIdempotencyKey('code:kept', claim.token, 60_000);
      const id = await store.enqueueEvent({
        name: 'code/workflow_run.completed',
        provider: 'code',
        idempotencyKey: 'code:q',
        payload: PAYLOAD,
      });
      await store.incrementWindowCounter('ip:kept', 60_000);
      await store.markProviderVerified('inbox', 1234);
      await store.close();

      store = await open();
      expect(await store.claimIdempotencyKey('code:kept', 60_000)).toEqual({ status: 'done' });
      expect((await store.claimNextEvent('after-restart', 60_000))?.id).toBe(id);
      expect((await store.readWindowCounter('ip:kept'))?.count).toBe(1);
      expect(await store.providerVerifiedTimes()).toEqual({ inbox: 1234 });
    });
  });
}
