// The fleet's keys on a redis-server in cluster mode (one node owning every slot refuses any
// command, transaction or script whose keys span slots, as a real cluster does): two instances
// list each other's live calls and relay a hang-up, and every key the fleet writes expires.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startTwilioCall } from '../helpers/live-call.js';
import { deleteKeys } from '../helpers/redis.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { startServer, type TestServer } from '../helpers/server.js';

if (!REDIS_SERVER) console.warn('skipping test/fleet/cluster.test.ts: redis-server not found');

const ADMIN_TOKEN = 'fleet-cluster-admin-token-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe.skipIf(!REDIS_SERVER)('the fleet on Redis in cluster mode', () => {
  let redis: RedisServer | undefined;
  let agent: FakeAgent | undefined;
  const servers: TestServer[] = [];

  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    await agent?.close();
    await redis?.stop();
  });

  it('keeps one key per instance, each expiring, and relays across them', async () => {
    redis = await startRedisServer({ cluster: true });
    agent = await startFakeAgent({ autoApply: true });
    const prefix = `cbtest-cluster-${randomBytes(4).toString('hex')}:`;
    for (const name of ['cluster-a', 'cluster-b']) {
      servers.push(
        await startServer({
          AGENT_URL: agent.url,
          AGENT_API_KEY: 'key',
          ADMIN_TOKEN,
          REDIS_URL: redis.url,
          REDIS_KEY_PREFIX: prefix,
          INSTANCE_ID: name,
          STREAM_TOKEN_SECRET: 'fleet-cluster-stream-token-secret-0000',
        }),
      );
    }
    const [a, b] = servers as [TestServer, TestServer];
    const { callSid, stream } = await startTwilioCall(a.baseUrl);
    await expect
      .poll(async () => {
        const res = await fetch(`${b.baseUrl}/v1/calls?live=true`, { headers: admin });
        return ((await res.json()) as { calls: Array<{ callSid: string; instance: string }> }).calls;
      })
      .toEqual([expect.objectContaining({ callSid, instance: 'cluster-a' })]);

    const client = new Redis(redis.url);
    try {
      const keys = await client.keys(`${prefix}fleet:*`);
      // fleet:ready: the instances taking new calls, where a draining one prepares them.
      expect(keys.sort()).toEqual([
        `${prefix}fleet:instances`,
        `${prefix}fleet:live:cluster-a`,
        `${prefix}fleet:ready`,
      ]);
      for (const key of keys) expect(await client.pttl(key), key).toBeGreaterThan(0);
      // Each instance's list hashes to a slot of its own name: the directory spreads over the cluster.
      const slot = async (key: string) => Number(await client.call('CLUSTER', 'KEYSLOT', key));
      expect(await slot(`${prefix}fleet:live:cluster-a`)).not.toBe(
        await slot(`${prefix}fleet:live:cluster-b`),
      );
    } finally {
      client.disconnect();
    }

    const res = await fetch(`${b.baseUrl}/v1/calls/${callSid}/hangup`, { method: 'POST', headers: admin });
    expect(res.status).toBe(200);
    await stream.closed;
    await deleteKeys(prefix, redis.url);
  });
});
