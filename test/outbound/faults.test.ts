// The dialer under faults: a process that stops mid-campaign and another that takes over on the
// same SQLite file, and two dialers sharing one Redis.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import type { CallScript } from './fake-originator.js';
import { planScript } from './fake-originator.js';
import { csvOf, dialerRig, personNumbers, type Rig, sqliteFile } from './rig.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

let rig: Rig | null = null;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await rig?.close();
  rig = null;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Counts every attempt the store lets begin, per store client. */
function countBegins(store: Store): { begun: number } {
  const counter = { begun: 0 };
  const begin = store.beginAttempt.bind(store);
  store.beginAttempt = async (input) => {
    const result = await begin(input);
    if (result.ok) counter.begun += 1;
    return result;
  };
  return counter;
}

describe('a restart mid-campaign', () => {
  it('dials no one twice and forgets no one', async () => {
    // Attempts are claimed in the store before the carrier is asked; a new process adopts the open
    // ones once the old one's heartbeat lapses, and reconciles them from the carrier's call status.
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    rig = await dialerRig({
      dataDir: dir,
      options: { heartbeatTtlMs: 20 * SECOND, reconcileEveryMs: 5 * SECOND },
    });
    const people = personNumbers(24);
    const busyFirst = ['+12125550165', '+12125550166', '+12125550167']; // busy, then a person
    const id = await rig.campaign(
      {
        pacing: { callsPerSecond: 2, maxConcurrent: 10 },
        retry: { maxAttempts: 2, delaySeconds: 30, on: ['busy'] },
      },
      csvOf([...busyFirst, ...people]),
    );
    await rig.run(8 * SECOND);
    const first = rig.dialers[0]!;
    expect(rig.originator.liveCount).toBeGreaterThan(0);
    expect(rig.originator.dials.length).toBeGreaterThan(5);

    // The process stops; calls end meanwhile and their callbacks find no one.
    await first.stop();
    await rig.run(30 * SECOND);
    const store = openSqliteStore({ file: sqliteFile(dir) });
    rig.addDialer(store);
    await rig.run(10 * MINUTE);

    expect((await store.getCampaign(id))?.state).toBe('completed');
    for (const number of people) expect(rig.originator.dialsTo(number), number).toHaveLength(1);
    for (const number of busyFirst) expect(rig.originator.dialsTo(number), number).toHaveLength(2);
    const tally = await store.contactTally(id);
    expect(tally.states).toEqual({ pending: 0, dialing: 0, retry: 0, done: 27 });
    expect(tally.outcomes.completed).toBe(27);
    // Calls that ended while no dialer ran were read back from the carrier.
    expect(rig.originator.statusQueries.length).toBeGreaterThan(0);
  });

  it('never redials an attempt that was claimed but not confirmed by the carrier before the stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const silent = '+12125550100';
    rig = await dialerRig({
      dataDir: dir,
      script: (request, attempt): CallScript =>
        request.to === silent ? 'no_reply' : planScript(request, attempt),
      options: { heartbeatTtlMs: 20 * SECOND, reconcileEveryMs: 5 * SECOND, lostDispatchGraceMs: 5 * MINUTE },
    });
    const id = await rig.campaign(
      { retry: { maxAttempts: 3, delaySeconds: 10, on: ['failed'] } },
      csvOf([silent, '+12125550101']),
    );
    await rig.run(SECOND);
    await rig.dialers[0]!.stop();
    await rig.run(MINUTE);
    const store = openSqliteStore({ file: sqliteFile(dir) });
    rig.addDialer(store);
    await rig.run(10 * MINUTE);
    expect(rig.originator.dialsTo(silent)).toHaveLength(1);
    const contact = await store.getContact(id, 1);
    expect(contact).toMatchObject({ state: 'done', outcome: 'failed' });
    expect(contact?.attempts.map((a) => a.reason)).toEqual(['lost_before_dispatch']);
    expect((await store.getCampaign(id))?.state).toBe('completed');
  });
});

describe('a final status callback that never arrives', () => {
  it('is read from the carrier once the call is five minutes old; a long call is asked about a few times', async () => {
    // A carrier sends the final status once; the instance it reached may have been stopping.
    const long = '+12125550101';
    rig = await dialerRig({
      script: (request, attempt): CallScript =>
        request.to === long
          ? { outcome: 'completed', afterMs: 90 * MINUTE, durationMs: 90 * MINUTE }
          : planScript(request, attempt),
    });
    rig.originator.sink = null;
    const id = await rig.campaign({}, csvOf(['+12125550100', long]));
    await rig.run(4 * MINUTE);
    expect(rig.originator.statusQueries).toEqual([]);
    expect(await rig.store.openAttempts(id)).toHaveLength(2);
    await rig.run(2 * MINUTE);
    expect(await rig.store.getContact(id, 1)).toMatchObject({ state: 'done', outcome: 'completed' });
    expect(await rig.store.openAttempts(id)).toHaveLength(1);
    await rig.run(95 * MINUTE);
    expect((await rig.store.getCampaign(id))?.state).toBe('completed');
    const longCall = rig.originator.dialsTo(long)[0]!.callSid!;
    const asked = rig.originator.statusQueries.filter((callSid) => callSid === longCall).length;
    // At 5 minutes, then 30 s, 1, 2, 4, 8, 16 and 30 minutes apart: the ninth, at 96.5, finds it ended.
    expect(asked).toBeGreaterThanOrEqual(8);
    expect(asked).toBeLessThanOrEqual(10);
  });
});

const available = await redisAvailable();
if (!available) console.warn(`skipping the shared-Redis dialer tests: no Redis answers at ${REDIS_URL}`);

describe.skipIf(!available)('two dialers on one Redis', () => {
  it('dial each contact exactly once and hold the global pace', async () => {
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    cleanups.push(() => deleteKeys(keyPrefix));
    const storeA = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const storeB = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const a = countBegins(storeA);
    const b = countBegins(storeB);
    rig = await dialerRig({ store: storeA });
    rig.addDialer(storeB);
    const numbers = personNumbers(300);
    const start = rig.clock.now();
    const id = await rig.campaign({ pacing: { callsPerSecond: 2, maxConcurrent: 100 } }, csvOf(numbers));

    await rig.run(MINUTE);
    const inMinute = rig.originator.dials.filter((d) => d.atMs < start + MINUTE).length;
    expect(inMinute).toBeGreaterThanOrEqual(108);
    expect(inMinute).toBeLessThanOrEqual(132);
    expect(a.begun).toBeGreaterThan(10);
    expect(b.begun).toBeGreaterThan(10);

    await rig.run(3 * MINUTE);
    expect((await storeB.getCampaign(id))?.state).toBe('completed');
    expect(rig.originator.dials).toHaveLength(300);
    expect(new Set(rig.originator.dials.map((d) => d.to)).size).toBe(300);
    expect(a.begun + b.begun).toBe(300);
    expect((await storeA.contactTally(id)).outcomes.completed).toBe(300);
    // Four simulated minutes of two dialers on a real Redis: seconds of real time, more on a busy machine.
  }, 60_000);
});
