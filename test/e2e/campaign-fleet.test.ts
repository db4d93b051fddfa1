// Two server processes sharing one Redis run one campaign together, each placing its calls on its own
// built-in simulated carrier: every contact is dialed exactly once between them, both take part, and
// the campaign completes with each outcome the number plan predicts. Needs Redis; each run has its
// own key prefix.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { adminRequest } from '../helpers/admin-request.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the shared-Redis campaign test: no Redis answers at ${REDIS_URL}`);

const TOKEN = 'admin-token-for-campaign-fleet';
const keyPrefix = `callbridge-test:${randomUUID()}:`;

interface ContactView {
  phone: string;
  state: string;
  outcome: string | null;
  attempts: Array<{ callSid: string | null }>;
}

describe.skipIf(!redisUp)('a campaign on two server processes sharing Redis', () => {
  let servers: ServerProcess[] = [];
  beforeAll(async () => {
    await ensureBuilt();
    const shared = {
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN: TOKEN,
      STREAM_TOKEN_SECRET: 'stream-token-secret-shared-by-the-fleet',
      SIM_CALLEE_SPEEDUP: '20',
    };
    servers = await Promise.all([
      spawnServer({ ...shared, INSTANCE_ID: 'a' }),
      spawnServer({ ...shared, INSTANCE_ID: 'b' }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await disposeAll();
    await deleteKeys(keyPrefix);
  });

  const admin = (server: ServerProcess, path: string, body?: unknown, type?: string) =>
    adminRequest(server.baseUrl, TOKEN, path, body, type);

  it('dials each contact exactly once between them', async () => {
    const [a, b] = servers as [ServerProcess, ServerProcess];
    // People, busy lines and failures: ten of each.
    const phones = [0, 70, 90].flatMap((base) =>
      Array.from({ length: 10 }, (_, i) => `+1212555${String(100 + base + i).padStart(4, '0')}`),
    );
    const created = await admin(a, '/campaigns', {
      name: 'fleet',
      pacing: { callsPerSecond: 4, maxConcurrent: 12 },
      retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
    });
    const { id } = (await created.json()) as { id: string };
    expect(
      (await admin(a, `/campaigns/${id}/contacts`, `phone\n${phones.join('\n')}\n`, 'text/csv')).status,
    ).toBe(200);
    expect((await admin(b, `/campaigns/${id}/start`, {})).status).toBe(200);

    const deadline = Date.now() + 120_000;
    let state = '';
    while (state !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      state = ((await (await admin(a, `/campaigns/${id}`)).json()) as { state: string }).state;
    }
    expect(state, `${a.output()}\n${b.output()}`).toBe('completed');

    const page = (await (await admin(b, `/campaigns/${id}/contacts?limit=200`)).json()) as {
      contacts: ContactView[];
    };
    expect(page.contacts).toHaveLength(30);
    const sids = page.contacts.flatMap((contact) => contact.attempts.map((attempt) => attempt.callSid));
    expect(sids).toHaveLength(30);
    expect(new Set(sids).size).toBe(30);
    for (const contact of page.contacts) {
      const tail = Number(contact.phone.slice(-2));
      const expected = tail < 40 ? 'completed' : tail < 80 ? 'busy' : 'failed';
      expect(contact, contact.phone).toMatchObject({ state: 'done', outcome: expected });
    }
    // Both instances carried calls: the records of the people reached name each.
    const records = (await (await admin(a, '/calls?limit=200')).json()) as { calls: CallRecord[] };
    const instances = new Set(
      records.calls.filter((call) => call.turns.length > 0).map((call) => call.instance),
    );
    expect([...instances].sort()).toEqual(['a', 'b']);
    expect(
      a.errorLogs().count + b.errorLogs().count,
      [...a.errorLogs().first, ...b.errorLogs().first].join('\n'),
    ).toBe(0);
  }, 180_000);
});
