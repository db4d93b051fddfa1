// While Redis is away the webhook gateway answers 503 at once, so the provider retries, whether
// Redis died or stopped answering with its connections open; once Redis is back, the retried
// delivery is processed exactly once and queued events drain again. The app is the real one, on a
// throwaway redis-server of the test's own that the test kills, restarts, freezes and thaws.
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../helpers/redis-server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type FakeOperatorGateway, hmacOf, startFakeOperatorGateway } from './helpers.js';
import { CODE_SECRET, queueWorkflowRun } from './process/deliveries.js';

if (!REDIS_SERVER) console.warn('skipping the Redis outage tests: redis-server not found');

const DEPLOY_SECRET = 'outage-deploy-secret';

describe.skipIf(!REDIS_SERVER)('the webhook gateway through a Redis outage', () => {
  let redis: RedisServer;
  let operator: FakeOperatorGateway;
  let server: TestServer;

  beforeEach(async () => {
    redis = await startRedisServer();
    operator = await startFakeOperatorGateway();
    server = await startServer({
      REDIS_URL: redis.url,
      WEBHOOK_SECRET_DEPLOY: DEPLOY_SECRET,
      WEBHOOK_SECRET_CODE: CODE_SECRET,
      QUEUE_PILOTS: 'code',
      OPERATOR_GATEWAY_URL: operator.url,
    });
    server.app.callbridge.gateway.startDrainer();
  });

  afterEach(async () => {
    redis.thaw();
    await server.close();
    await operator.close();
    await redis.stop();
  });

  async function deploy(id: string) {
    const body = JSON.stringify({ id, type: 'deployment.succeeded' });
    const startedMs = Date.now();
    const res = await fetch(`${server.baseUrl}/webhooks/deploy`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-deploy-signature': hmacOf('sha1', DEPLOY_SECRET, body).toString('hex'),
      },
      body,
    });
    const json = (await res.json()) as { status?: string; error?: { code: string; message: string } };
    return {
      status: res.status,
      json,
      retryAfter: res.headers.get('retry-after'),
      tookMs: Date.now() - startedMs,
    };
  }

  /** The provider's retries: again every 200 ms until the gateway takes the delivery. */
  async function retryUntilTaken(send: () => Promise<{ status: number }>, timeoutMs = 15_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { status } = await send();
      if (status !== 503) return status;
      if (Date.now() > deadline) throw new Error('the gateway kept answering 503');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const deliveriesOf = (id: string) => operator.requests.filter((r) => JSON.stringify(r.json).includes(id));

  it(
    'answers 503 while Redis is down, then processes the retried delivery once',
    { timeout: 40_000 },
    async () => {
      expect((await deploy('evt-before')).status).toBe(200);

      await redis.kill();
      const refused = await deploy('evt-during');
      expect(refused.status).toBe(503);
      expect(refused.json.error?.code).toBe('CALLBRIDGE_UNAVAILABLE');
      expect(refused.retryAfter).toBe('10');
      expect(refused.tookMs).toBeLessThan(3_000);
      const queued = `run-${randomUUID()}`;
      expect((await queueWorkflowRun(server.baseUrl, queued)).status).toBe(503);
      // The process goes on: liveness holds, and so would every live call.
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);

      await redis.restart();
      expect(await retryUntilTaken(() => deploy('evt-during'))).toBe(200);
      expect((await deploy('evt-during')).json.status).toBe('duplicate');
      expect(await retryUntilTaken(() => queueWorkflowRun(server.baseUrl, queued))).toBe(202);
      await operator.waitForRequests(3, 15_000);
      expect(deliveriesOf('evt-during')).toHaveLength(1);
      expect(deliveriesOf(queued)).toHaveLength(1);
    },
  );

  it(
    'answers 503 within seconds while Redis holds its connections but answers nothing',
    { timeout: 40_000 },
    async () => {
      expect((await deploy('evt-before')).status).toBe(200);

      redis.freeze();
      const refused = await deploy('evt-frozen');
      expect(refused.status).toBe(503);
      expect(refused.json.error?.code).toBe('CALLBRIDGE_UNAVAILABLE');
      // The limiter's read and the idempotency claim each give up after the command timeout (2 s).
      expect(refused.tookMs).toBeLessThan(6_000);

      redis.thaw();
      expect(await retryUntilTaken(() => deploy('evt-frozen'))).toBe(200);
      await operator.waitForRequests(2);
      expect(deliveriesOf('evt-frozen')).toHaveLength(1);
    },
  );
});
