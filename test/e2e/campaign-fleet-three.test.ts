// Three server processes sharing one Redis and one simulated carrier API (started here, as a fleet
// shares one real carrier: `SIM_CARRIER_API_URL`) run campaigns together. What the carrier was
// asked is the proof: every contact's number is asked for once, and the calls in flight at the
// carrier never pass the campaign's cap. Then one instance is killed (SIGKILL) while it has calls
// in flight: its status callbacks go nowhere, so the survivors must adopt its attempts once its
// heartbeat lapses and read each call's end from the carrier's call status; a call still ringing
// when they ask is waited for, not dialed again. Needs Redis; each run has its own key prefix.
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxOverlap } from '../../src/bench/campaign.js';
import { simulatedCallee } from '../../src/sim/callee/answer.js';
import { adminRequest } from '../helpers/admin-request.js';
import { simulatedCalleeEnv } from '../helpers/simulation.js';
import { calleeFor, expectedOutcome } from '../../src/sim/callee/plan.js';
import type { SimCallLog } from '../../src/sim/carrier-api/call-log.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the three-instance campaign test: no Redis answers at ${REDIS_URL}`);

const TOKEN = 'admin-token-for-campaign-fleet-three';
const keyPrefix = `callbridge-test:${randomUUID()}:`;
const CAP = 8;
/** The simulated callees wait a third of real time: a ring-out lasts 10 s, longer than a failover. */
const TIME_SCALE = 1 / 3;
const FAILOVER_MS = 3_000;

interface AttemptView {
  callSid: string | null;
  outcome: string | null;
  reason: string | null;
  startedAt: string | null;
  endedAt: string | null;
}
interface ContactView {
  phone: string;
  state: string;
  outcome: string | null;
  attempts: AttemptView[];
}

/** One create-call request as the carrier saw it. */
interface Placed {
  callSid: string;
  to: string;
  /** The instance that placed it: the origin of its answer URL. */
  origin: string;
  /** The attempt id the call carries (`<campaign>.<seq>.<dial>`). */
  attemptId: string;
  /** Calls of the same campaign not yet ended at the carrier, this one included, when it was placed. */
  inFlight: number;
}

/** A status read: which call, and whether it was still live at the carrier when asked. */
interface StatusRead {
  callSid: string;
  live: boolean;
}

/**
 * The attempt id of the call an answer URL names: the URL carries only a reference to the call's
 * context (`r1.<id>.<binding>`), and the fleet keeps the context in the shared Redis under its id.
 */
async function attemptOf(redis: Redis, prefix: string, answerUrl: string): Promise<string> {
  const id = (new URL(answerUrl).searchParams.get('ctx') ?? '').split('.')[1] ?? '';
  try {
    const kept = await redis.get(`${prefix}outbound-context:${id}`);
    const context = JSON.parse(kept ?? '{}') as { attemptId?: unknown };
    return typeof context.attemptId === 'string' ? context.attemptId : '';
  } catch {
    return '';
  }
}

/** Contact numbers: `tails` (the number plan's last two digits) in each of three area codes. */
function phones(tails: readonly number[]): string[] {
  return ['212', '646', '718'].flatMap((area) =>
    tails.map((tail) => `+1${area}55501${String(tail).padStart(2, '0')}`),
  );
}

describe.skipIf(!redisUp)('a campaign on three server processes sharing Redis and a carrier', () => {
  let servers: ServerProcess[] = [];
  let carrier: SimulatedCarrierApi;
  let calls: SimCallLog;
  const placed: Placed[] = [];
  const statusReads: StatusRead[] = [];
  const placedWatchers = new Set<(call: Placed) => void>();
  /** Every call placed, at once, before its attempt id is read from Redis. */
  const placedSids: string[] = [];
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  beforeAll(async () => {
    // Signed with the simulated carrier's own keys, derived from the fleet's shared secret.
    const callee = simulatedCallee({
      timeScale: TIME_SCALE,
      env: simulatedCalleeEnv('stream-token-secret-shared-by-the-fleet'),
    });
    carrier = await startSimulatedCarrierApi({
      onPlaced: (call, log) => {
        // One campaign runs at a time here: every call not ended is one of its own.
        placedSids.push(call.callSid);
        const inFlight = placedSids.filter((sid) => log.get(sid)?.state !== 'ended').length;
        callee(call, log);
        void attemptOf(redis, keyPrefix, call.answerUrl).then((attemptId) => {
          const record = {
            callSid: call.callSid,
            to: call.to,
            origin: new URL(call.answerUrl).origin,
            attemptId,
            inFlight,
          };
          placed.push(record);
          for (const watch of placedWatchers) watch(record);
        });
      },
      onRequest: ({ method, path }) => {
        const sid = /^\/2010-04-01\/Accounts\/[^/]+\/Calls\/([^/]+)\.json$/.exec(path)?.[1];
        if (method !== 'GET' || sid === undefined) return;
        const call = calls.get(sid);
        statusReads.push({ callSid: sid, live: call !== undefined && call.state !== 'ended' });
      },
    });
    calls = carrier.calls;
    await ensureBuilt();
    const shared = {
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN: TOKEN,
      STREAM_TOKEN_SECRET: 'stream-token-secret-shared-by-the-fleet',
      SIM_CARRIER_API_URL: carrier.url,
      DIALER_FAILOVER_MS: String(FAILOVER_MS),
      DIALER_LOST_DISPATCH_GRACE_MS: '5000',
    };
    servers = await Promise.all(['a', 'b', 'c'].map((name) => spawnServer({ ...shared, INSTANCE_ID: name })));
  }, 120_000);
  afterAll(async () => {
    await disposeAll();
    await carrier?.close();
    await deleteKeys(keyPrefix);
    redis.disconnect();
  });

  const admin = (server: ServerProcess, path: string, body?: unknown, type?: string) =>
    adminRequest(server.baseUrl, TOKEN, path, body, type);

  async function startCampaign(server: ServerProcess, name: string, numbers: string[]): Promise<string> {
    const created = await admin(server, '/campaigns', {
      name,
      pacing: { callsPerSecond: 6, maxConcurrent: CAP },
      retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
      // Failures are a third of the numbers on purpose: the breaker is not what is tested here.
      breaker: { failureShare: 1 },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const upload = await admin(
      server,
      `/campaigns/${id}/contacts`,
      `phone\n${numbers.join('\n')}\n`,
      'text/csv',
    );
    expect(upload.status).toBe(200);
    expect((await admin(server, `/campaigns/${id}/start`, {})).status).toBe(200);
    return id;
  }

  async function waitCompleted(server: ServerProcess, id: string, others: ServerProcess[]): Promise<void> {
    const deadline = Date.now() + 90_000;
    let state = '';
    while (state !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = ((await (await admin(server, `/campaigns/${id}`)).json()) as { state: string }).state;
    }
    expect(state, others.map((other) => other.output().slice(-4000)).join('\n---\n')).toBe('completed');
  }

  async function contactsOf(server: ServerProcess, id: string): Promise<ContactView[]> {
    const page = (await (await admin(server, `/campaigns/${id}/contacts?limit=200`)).json()) as {
      contacts: ContactView[];
    };
    return page.contacts;
  }

  /**
   * The cap, as the store recorded each attempt's claim and end across the three instances, was
   * never exceeded. The carrier's own count of live calls is only a witness that calls did overlap:
   * it learns of an end one close handshake after the server, which may already have dialed again.
   */
  function expectCapHeld(contacts: ContactView[], calls: Placed[]): void {
    const intervals = contacts.flatMap((contact) =>
      contact.attempts.map((a): [number, number] => [
        Date.parse(a.startedAt!),
        Date.parse(a.endedAt ?? new Date().toISOString()),
      ]),
    );
    expect(maxOverlap(intervals)).toBeLessThanOrEqual(CAP);
    expect(Math.max(...calls.map((p) => p.inFlight))).toBeGreaterThan(1);
  }

  /** Create-call requests per number for one campaign. */
  function dialsByNumber(id: string): Map<string, Placed[]> {
    const byNumber = new Map<string, Placed[]>();
    for (const call of placed.filter((p) => p.attemptId.startsWith(`${id}.`))) {
      byNumber.set(call.to, [...(byNumber.get(call.to) ?? []), call]);
    }
    return byNumber;
  }

  it('asks the carrier for each contact once, within the cap shared by the three', async () => {
    const numbers = phones([0, 1, 2, 3, 4, 70, 71, 72, 73, 74, 90, 91, 92, 93, 94]);
    const id = await startCampaign(servers[0]!, 'fleet-of-three', numbers);
    await waitCompleted(servers[1]!, id, servers);

    const dials = dialsByNumber(id);
    expect([...dials.keys()].sort()).toEqual([...numbers].sort());
    for (const [number, made] of dials) expect(made, number).toHaveLength(1);
    const mine = placed.filter((p) => p.attemptId.startsWith(`${id}.`));
    // The instances shared the work (which of them dials is the store's lease, not a fixed split:
    // a run where one of the three got no contact is no fault).
    const origins = new Set(mine.map((p) => p.origin));
    expect(origins.size).toBeGreaterThanOrEqual(2);
    for (const origin of origins) expect(servers.map((s) => s.baseUrl)).toContain(origin);

    const contacts = await contactsOf(servers[2]!, id);
    expect(contacts).toHaveLength(numbers.length);
    expectCapHeld(contacts, mine);
    for (const contact of contacts) {
      expect(contact, contact.phone).toMatchObject({
        state: 'done',
        outcome: expectedOutcome(calleeFor(contact.phone), 'off'),
      });
      expect(contact.attempts.map((a) => a.callSid)).toEqual([dials.get(contact.phone)![0]!.callSid]);
    }

    // The results name every contact once, with the outcome the contact view has.
    const csv = await admin(servers[0]!, `/campaigns/${id}/results.csv`);
    expect(csv.status).toBe(200);
    const rows = parse(await csv.text(), { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => row.phone).sort()).toEqual([...numbers].sort());
    for (const row of rows) {
      expect(row, row.phone).toMatchObject({
        attempts: '1',
        state: 'done',
        outcome: expectedOutcome(calleeFor(row.phone!), 'off'),
      });
    }
    const errors = servers.map((s) => s.errorLogs());
    expect(
      errors.reduce((sum, e) => sum + e.count, 0),
      errors.flatMap((e) => e.first).join('\n'),
    ).toBe(0);
  }, 120_000);

  it('reconciles the calls of an instance killed mid-campaign from the carrier, dialing no one twice', async () => {
    // People, busy lines, ring-outs (10 s of ringing: still live when the survivors first ask) and failures.
    const numbers = phones([0, 1, 2, 3, 4, 70, 71, 72, 73, 80, 81, 90, 91, 92, 93]);
    // The first ring-out placed names the instance to kill, once its call id is recorded.
    const firstRingOut = new Promise<Placed>((resolve) => {
      const watch = (call: Placed) => {
        if (calleeFor(call.to).kind !== 'no_answer') return;
        placedWatchers.delete(watch);
        resolve(call);
      };
      placedWatchers.add(watch);
    });
    const id = await startCampaign(servers[0]!, 'fleet-of-three-kill', numbers);
    const ringOut = await firstRingOut;
    expect(ringOut.attemptId.startsWith(`${id}.`)).toBe(true);
    const victim = servers.find((s) => s.baseUrl === ringOut.origin)!;
    const survivors = servers.filter((s) => s !== victim);
    for (let i = 0; i < 100; i++) {
      const contact = (await contactsOf(survivors[0]!, id)).find((c) => c.phone === ringOut.to);
      if (contact?.attempts[0]?.callSid === ringOut.callSid) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const killedAtMs = Date.now();
    await victim.kill('SIGKILL');

    await waitCompleted(survivors[0]!, id, survivors);

    const dials = dialsByNumber(id);
    const contacts = await contactsOf(survivors[1]!, id);
    // The victim's calls whose attempts it had not closed when it died: their final callbacks reach
    // no one, so only a survivor can have closed them. (The carrier's own view is no guide: it
    // learns of an end one close handshake after the server.)
    const closedAt = new Map(
      contacts.flatMap((c) => c.attempts.map((a) => [a.callSid, Date.parse(a.endedAt ?? '')] as const)),
    );
    const orphaned = placed.filter(
      (p) =>
        p.origin === victim.baseUrl &&
        p.attemptId.startsWith(`${id}.`) &&
        (closedAt.get(p.callSid) ?? Number.NaN) >= killedAtMs,
    );
    expect(orphaned.map((p) => p.callSid)).toContain(ringOut.callSid);
    expect(contacts).toHaveLength(numbers.length);
    for (const contact of contacts) {
      const made = dials.get(contact.phone) ?? [];
      expect(contact.state, contact.phone).toBe('done');
      expect(contact.attempts, contact.phone).toHaveLength(1);
      // At most one request to the carrier per number, ever; none only for an attempt the victim
      // claimed and died before asking (closed, not redialed).
      expect(made.length, contact.phone).toBeLessThanOrEqual(1);
      const [attempt] = contact.attempts as [AttemptView];
      if (attempt.reason === 'lost_before_dispatch') {
        expect(contact.outcome, contact.phone).toBe('failed');
        continue;
      }
      expect(made, contact.phone).toHaveLength(1);
      expect(attempt.callSid, contact.phone).toBe(made[0]!.callSid);
      expect(contact.outcome, contact.phone).toBe(expectedOutcome(calleeFor(contact.phone), 'off'));
    }
    // Each orphaned call was read back from the carrier, and its attempt closed from what it said.
    for (const call of orphaned) {
      expect(
        statusReads.some((read) => read.callSid === call.callSid),
        `status of ${call.to}`,
      ).toBe(true);
      const contact = contacts.find((c) => c.phone === call.to)!;
      expect(contact.attempts[0]!.reason, call.to).toBe('reconciled from the carrier call status');
    }
    // The ring-out was still ringing when a survivor first asked: it was waited for, not redialed.
    expect(statusReads.find((read) => read.callSid === ringOut.callSid)?.live).toBe(true);
    expect(contacts.find((c) => c.phone === ringOut.to)?.outcome).toBe('no_answer');
    expectCapHeld(
      contacts,
      placed.filter((p) => p.attemptId.startsWith(`${id}.`)),
    );
  }, 120_000);
});
