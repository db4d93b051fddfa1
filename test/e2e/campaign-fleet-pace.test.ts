// Three server processes sharing one Redis and one simulated carrier API run one campaign at
// 5 calls/s with a cap far above what the pace lets through, so the pace is the only limit. Needs
// Redis; each run has its own key prefix.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { worstWindow } from '../../src/bench/campaign.js';
import { simulatedCallee } from '../../src/sim/callee/answer.js';
import { adminRequest } from '../helpers/admin-request.js';
import { simulatedCalleeEnv } from '../helpers/simulation.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the three-instance pace test: no Redis answers at ${REDIS_URL}`);

const TOKEN = 'admin-token-for-campaign-fleet-pace';
const keyPrefix = `callbridge-test:${randomUUID()}:`;
const PACE = 5;

interface ContactView {
  phone: string;
  state: string;
  attempts: Array<{ startedAt: string | null }>;
}

describe.skipIf(!redisUp)('one campaign paced across three server processes', () => {
  let servers: ServerProcess[] = [];
  let carrier: SimulatedCarrierApi;
  const placedBy: string[] = [];

  beforeAll(async () => {
    // Signed with the simulated carrier's own keys, derived from the fleet's shared secret: an
    // unsigned callback reads no context.
    const callee = simulatedCallee({
      timeScale: 1 / 10,
      env: simulatedCalleeEnv('stream-token-secret-shared-by-the-fleet'),
    });
    carrier = await startSimulatedCarrierApi({
      onPlaced: (call, log) => {
        placedBy.push(new URL(call.answerUrl).origin);
        callee(call, log);
      },
    });
    await ensureBuilt();
    const shared = {
      REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN: TOKEN,
      STREAM_TOKEN_SECRET: 'stream-token-secret-shared-by-the-fleet',
      SIM_CARRIER_API_URL: carrier.url,
    };
    servers = await Promise.all(['a', 'b', 'c'].map((name) => spawnServer({ ...shared, INSTANCE_ID: name })));
  }, 120_000);
  afterAll(async () => {
    await disposeAll();
    await carrier?.close();
    await deleteKeys(keyPrefix);
  });

  const admin = (server: ServerProcess, path: string, body?: unknown, type?: string) =>
    adminRequest(server.baseUrl, TOKEN, path, body, type);

  it('never lets a sliding second hold more than 5 dials, whichever instance dials', async () => {
    // Invariant: the pace is one rule in the shared store, so three dialers together begin at most
    // `callsPerSecond` attempts in any one-second window and never dial faster than the pace.
    // Busy lines and failures (numbers ending 70-79, 90-99): quick calls, so only the pace limits.
    const numbers = Array.from({ length: 60 }, (_, i) => {
      const tail = (i % 2 ? 70 : 90) + (i % 10);
      return `+1${['212', '646', '718'][i % 3]}55${String(i).padStart(3, '0')}${tail}`;
    });
    const created = await admin(servers[0]!, '/campaigns', {
      name: 'fleet-pace',
      pacing: { callsPerSecond: PACE, maxConcurrent: 200 },
      retry: { maxAttempts: 1, delaySeconds: 0, on: ['busy'] },
      breaker: { failureShare: 1 },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const upload = await admin(
      servers[1]!,
      `/campaigns/${id}/contacts`,
      `phone\n${numbers.join('\n')}\n`,
      'text/csv',
    );
    expect(upload.status).toBe(200);
    expect((await admin(servers[2]!, `/campaigns/${id}/start`, {})).status).toBe(200);

    const deadline = Date.now() + 90_000;
    let state = '';
    while (state !== 'completed' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = ((await (await admin(servers[0]!, `/campaigns/${id}`)).json()) as { state: string }).state;
    }
    expect(state, servers.map((s) => s.output().slice(-3000)).join('\n---\n')).toBe('completed');

    const page = (await (await admin(servers[1]!, `/campaigns/${id}/contacts?limit=200`)).json()) as {
      contacts: ContactView[];
    };
    const starts = page.contacts.flatMap((c) => c.attempts.map((a) => Date.parse(a.startedAt!)));
    expect(starts).toHaveLength(numbers.length);
    expect(worstWindow(starts)).toBeLessThanOrEqual(PACE);
    const sorted = [...starts].sort((a, b) => a - b);
    const achieved = ((sorted.length - 1) * 1_000) / (sorted.at(-1)! - sorted[0]!);
    expect(achieved).toBeLessThanOrEqual(PACE);
    // The dials came from more than one instance: the pace was shared, not held by one dialer.
    expect(placedBy).toHaveLength(numbers.length);
    expect(new Set(placedBy).size).toBeGreaterThanOrEqual(2);
  }, 150_000);
});
