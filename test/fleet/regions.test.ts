// Two regional fleets side by side on one machine and one Redis, as README's deployment section
// sets them up: REGION=global and REGION=eu, two `node dist/main.js` processes each, each fleet under
// its own REDIS_KEY_PREFIX. A region's live calls, call records, queued webhook events and
// campaigns never appear in the other's, and each fleet dials only its own region's agent host from
// config/regions.json (here every region's host is a fake agent of its own). Needs Redis.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import {
  disposeAll,
  ensureBuilt,
  freePort,
  ROOT,
  type ServerProcess,
  spawnServer,
} from '../helpers/server-process.js';
import { newCallSid, openMediaStream, voiceWebhook } from '../helpers/twilio-carrier.js';
import { type FixedPortGateway, operatorGatewayAt } from '../webhooks/operator-at.js';
import { CODE_SECRET, queueWorkflowRun } from '../webhooks/process/deliveries.js';

const hasRedis = await redisAvailable();
if (!hasRedis) console.warn(`skipping test/fleet/regions.test.ts: no Redis answers at ${REDIS_URL}`);

const REGION_NAMES = ['global', 'eu', 'au', 'in'] as const;
const ADMIN_TOKEN = 'fleet-regions-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

interface Fleet {
  region: 'global' | 'eu';
  prefix: string;
  instances: ServerProcess[];
  operator: FixedPortGateway;
}

describe.skipIf(!hasRedis)('a global and an eu fleet side by side', () => {
  const agents = new Map<string, FakeAgent>();
  const fleets: Fleet[] = [];
  let configDir: string;

  beforeAll(async () => {
    await ensureBuilt();
    for (const region of REGION_NAMES) agents.set(region, await startFakeAgent({ autoApply: true }));
    // The shipped configuration, with every region's agent host one of the test's fake agents.
    configDir = mkdtempSync(join(tmpdir(), 'callbridge-regions-'));
    cpSync(join(ROOT, 'config'), configDir, { recursive: true });
    writeFileSync(
      join(configDir, 'regions.json'),
      JSON.stringify(
        Object.fromEntries(
          REGION_NAMES.map((region) => [
            region,
            { agentUrl: agents.get(region)!.url, speechApiUrl: 'http://127.0.0.1:9' },
          ]),
        ),
      ),
    );
    for (const region of ['global', 'eu'] as const) {
      const prefix = `cbtest-${region}-${randomBytes(4).toString('hex')}:`;
      const operatorPort = await freePort();
      const operator = await operatorGatewayAt(operatorPort);
      const env = {
        REGION: region,
        AGENT_API_KEY: `key-for-${region}`,
        CONFIG_DIR: configDir,
        REDIS_URL,
        REDIS_KEY_PREFIX: prefix,
        ADMIN_TOKEN,
        STREAM_TOKEN_SECRET: `stream-token-secret-of-${region}-000000000`,
        WEBHOOK_SECRET_CODE: CODE_SECRET,
        QUEUE_PILOTS: 'code',
        OPERATOR_GATEWAY_URL: `http://127.0.0.1:${operatorPort}/events`,
      };
      const instances = await Promise.all(
        [1, 2].map((n) => spawnServer({ ...env, INSTANCE_ID: `${region}-${n}` })),
      );
      fleets.push({ region, prefix, instances, operator });
    }
  }, 120_000);

  afterAll(async () => {
    await disposeAll();
    for (const agent of agents.values()) await agent.close();
    for (const fleet of fleets) {
      await fleet.operator.close();
      await deleteKeys(fleet.prefix);
    }
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  const get = async (server: ServerProcess, path: string) => {
    const res = await fetch(`${server.baseUrl}${path}`, { headers: admin });
    expect(res.status, path).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };
  const liveSids = async (server: ServerProcess) =>
    ((await get(server, '/v1/calls?live=true')).calls as Array<{ callSid: string }>).map((c) => c.callSid);
  const recordSids = async (server: ServerProcess) =>
    ((await get(server, '/v1/calls')).calls as Array<{ callSid: string }>).map((c) => c.callSid);

  /** All keys under a prefix, names and values, to show nothing of the other region is there. */
  const dump = async (prefix: string): Promise<string> => {
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${prefix}*`);
      const parts: string[] = [];
      for (const key of keys) {
        const type = await redis.type(key);
        parts.push(key);
        if (type === 'string') parts.push((await redis.get(key)) ?? '');
        if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
        if (type === 'zset' || type === 'set' || type === 'list')
          parts.push(JSON.stringify(await redis.sort(key, 'ALPHA').catch(() => [])));
        if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
      return parts.join('\n');
    } finally {
      redis.disconnect();
    }
  };

  it('keeps each region to its own agent host, live calls, records, queue and campaigns', async () => {
    const [global, eu] = fleets as [Fleet, Fleet];
    const calls: Record<string, string> = {};
    for (const fleet of fleets) {
      const callSid = newCallSid();
      calls[fleet.region] = callSid;
      const server = fleet.instances[0]!;
      const answer = await voiceWebhook(server.baseUrl, {
        CallSid: callSid,
        From: '+15005550006',
        To: '+15005550001',
      });
      const stream = await openMediaStream(
        `${server.baseUrl.replace('http', 'ws')}${new URL(answer.streamUrl).pathname}`,
        { callSid },
      );
      stream.start(answer.parameters);
      // The region's own agent host takes the call, with the region's key.
      const conn = await agents.get(fleet.region)!.nextConnection();
      expect((await conn.waitFor('Settings')).tags).toContain(`call:${callSid}`);
      expect(conn.headers.authorization).toBe(`Token key-for-${fleet.region}`);
      // Listed live by both instances of its own fleet.
      for (const instance of fleet.instances) await expect.poll(() => liveSids(instance)).toEqual([callSid]);
      stream.stop();
      await stream.closed;
      for (const instance of fleet.instances)
        await expect.poll(() => recordSids(instance)).toEqual([callSid]);
      const record = await get(fleet.instances[1]!, `/v1/calls/${callSid}`);
      expect(record).toMatchObject({ region: fleet.region, instance: `${fleet.region}-1` });
    }
    for (const region of ['au', 'in']) expect(agents.get(region)!.connections, region).toEqual([]);
    expect(agents.get('global')!.connections).toHaveLength(1);
    expect(agents.get('eu')!.connections).toHaveLength(1);

    // Queued webhook events: each fleet's drainer forwards its own to its own operator gateway.
    const deliveries = { global: randomUUID(), eu: randomUUID() };
    for (const fleet of fleets) {
      expect((await queueWorkflowRun(fleet.instances[1]!.baseUrl, deliveries[fleet.region])).status).toBe(
        202,
      );
    }
    for (const fleet of fleets) {
      await expect
        .poll(() => fleet.operator.received.map((r) => r.key), { timeout: 15_000 })
        .toContain(`code:${deliveries[fleet.region]}`);
    }

    // Campaigns: created in one region, listed only there.
    const created: Record<string, string> = {};
    for (const fleet of fleets) {
      const res = await fetch(`${fleet.instances[0]!.baseUrl}/v1/campaigns`, {
        method: 'POST',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `renewals-${fleet.region}` }),
      });
      expect(res.status).toBe(201);
      created[fleet.region] = ((await res.json()) as { id: string }).id;
    }
    for (const fleet of fleets) {
      const listed = (await get(fleet.instances[1]!, '/v1/campaigns')).campaigns as Array<{ id: string }>;
      expect(listed.map((c) => c.id)).toEqual([created[fleet.region]]);
    }

    // Nothing of one region is anywhere under the other's prefix.
    for (const [mine, other] of [
      [global, eu],
      [eu, global],
    ] as const) {
      const stored = await dump(mine.prefix);
      expect(stored).toContain(calls[mine.region]);
      const traces = [
        calls[other.region]!,
        deliveries[other.region],
        created[other.region]!,
        `"region":"${other.region}"`,
        `"instance":"${other.region}-1"`,
      ];
      for (const trace of traces) {
        expect(stored, `${trace} under ${mine.region}`).not.toContain(trace);
      }
      expect(mine.operator.received.map((r) => r.key)).not.toContain(`code:${deliveries[other.region]}`);
    }
  }, 120_000);
});
