// docs/protocols/webhook-providers.md section 6: with QUEUE_PILOTS including `code`, code/workflow_run.completed
// goes onto the shared queue (202) and a drainer forwards it later under the same name, retrying
// with exponential backoff and dead-lettering after the last attempt; dead letters are listed and
// requeued through the admin API. code/package.published is always forwarded directly.
import { randomUUID } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { PROVIDERS } from '../../src/webhooks/providers/registry.js';
import { tasksProvider } from '../../src/webhooks/providers/tasks.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import {
  eventually,
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  metricValue,
  SECRETS,
  startFakeOperatorGateway,
  startGatewayApp,
  waitUntil,
} from './helpers.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the shared-queue test: no Redis answers at ${REDIS_URL}`);

const FAST_QUEUE = {
  baseDelayMs: 60,
  maxDelayMs: 1_000,
  maxAttempts: 3,
  pollIntervalMs: 10,
  gaugeIntervalMs: 0,
};

async function deliverCode(gw: GatewayApp, event: string, action: string, delivery: string = randomUUID()) {
  const body = JSON.stringify({ action, run: { id: delivery } });
  return gw.app.inject({
    method: 'POST',
    url: '/webhooks/code',
    headers: {
      'content-type': 'application/json',
      'x-code-event': event,
      'x-code-delivery': delivery,
      'x-hub-signature-256': await sign(SECRETS.code[0], body),
    },
    payload: body,
  });
}

describe('shared queue', () => {
  let operator: FakeOperatorGateway;
  const apps: GatewayApp[] = [];
  beforeEach(async () => {
    operator = await startFakeOperatorGateway();
  });
  afterEach(async () => {
    for (const gw of apps.splice(0)) await gw.close();
    await operator.close();
  });
  const start = async (opts: Parameters<typeof startGatewayApp>[0] = {}) => {
    const gw = await startGatewayApp({
      admin: true,
      options: { queue: FAST_QUEUE },
      ...opts,
      env: { OPERATOR_GATEWAY_URL: operator.url, QUEUE_PILOTS: 'code', ...opts.env },
    });
    apps.push(gw);
    return gw;
  };

  it('queues code/workflow_run.completed (202) and the drainer forwards it under the same name', async () => {
    const gw = await start();
    const res = await deliverCode(gw, 'workflow_run', 'completed', 'run-1');
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ status: 'queued', event: 'code/workflow_run.completed' });
    expect(operator.requests).toHaveLength(0);
    expect((await gw.store.queueStats()).depth).toBe(1);

    // A repeat while queued is a duplicate, not a second queued event.
    expect((await deliverCode(gw, 'workflow_run', 'completed', 'run-1')).json()).toEqual({
      status: 'duplicate',
    });

    gw.gateway.startDrainer();
    const [forwarded] = await operator.waitForRequests(1);
    expect(forwarded?.json.name).toBe('code/workflow_run.completed');
    expect(forwarded?.headers['x-callbridge-event']).toBe('code/workflow_run.completed');
    expect(forwarded?.headers['idempotency-key']).toBe('code:run-1');
    await eventually(
      () => gw.store.queueStats(),
      (s) => s.depth === 0,
      'the ack',
    );
    expect(operator.requests).toHaveLength(1);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'code',
        outcome: 'queued',
      }),
    ).toBe(1);
  });

  it('always forwards code/package.published directly', async () => {
    const gw = await start();
    const res = await deliverCode(gw, 'package', 'published');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'forwarded', event: 'code/package.published' });
    expect(operator.requests).toHaveLength(1);
  });

  it('forwards code/workflow_run.completed directly when code is not a queue pilot', async () => {
    const gw = await start({ env: { QUEUE_PILOTS: '' } });
    expect((await deliverCode(gw, 'workflow_run', 'completed')).json()).toEqual({
      status: 'forwarded',
      event: 'code/workflow_run.completed',
    });
  });

  it('queues any provider’s queue-enabled events once that provider is a pilot', async () => {
    const queuedTasks = { ...tasksProvider, queueEvents: ['task.completed'] };
    const gw = await start({
      env: { QUEUE_PILOTS: 'tasks' },
      options: { queue: FAST_QUEUE, providers: PROVIDERS.map((p) => (p.name === 'tasks' ? queuedTasks : p)) },
    });
    const body = JSON.stringify({ event_name: 'item:completed' });
    const headers = { 'x-tasks-hmac-sha256': hmacOf('sha256', SECRETS.tasks[0], body).toString('base64') };
    const res = await gw.app.inject({ method: 'POST', url: '/webhooks/tasks', headers, payload: body });
    expect(res.json()).toEqual({ status: 'queued', event: 'tasks/task.completed' });
  });

  it('retries with exponential backoff, dead-letters after the last attempt, and requeues via the admin API', async () => {
    operator.respondWith(502);
    const gw = await start();
    expect((await deliverCode(gw, 'workflow_run', 'completed', 'run-dead')).statusCode).toBe(202);
    gw.gateway.startDrainer();
    await waitUntil(() => operator.requests.length >= 3, 5_000, 'three attempts');
    const arrivals = operator.requests.map((r) => r.receivedAt);
    // Base 60 ms, doubled: about 60 ms before the second attempt, 120 ms before the third. The
    // bounds leave room for a busy machine delaying one delivery more than the next; without the
    // backoff the attempts would follow each other at once.
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(40);
    expect(arrivals[2]! - arrivals[1]!).toBeGreaterThanOrEqual(90);

    const listDead = async () =>
      (await gw.app.inject({ method: 'GET', url: '/v1/webhooks/dead-letters' })).json().deadLetters as Array<{
        id: string;
        name: string;
        attempts: number;
        lastError: string;
      }>;
    const letters = await eventually(listDead, (l) => l.length === 1, 'the dead letter');
    expect(letters[0]).toMatchObject({
      name: 'code/workflow_run.completed',
      attempts: 3,
      lastError: 'operator gateway answered 502',
    });
    expect(operator.requests).toHaveLength(3);
    await eventually(
      () => metricValue(gw.metrics, 'callbridge_webhook_dead_letters'),
      (v) => v === 1,
      'the gauge',
    );
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_queue_deliveries_total', { outcome: 'retried' }),
    ).toBe(2);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_queue_deliveries_total', {
        outcome: 'dead_lettered',
      }),
    ).toBe(1);

    operator.respondWith(200);
    const id = letters[0]!.id;
    const retried = await gw.app.inject({ method: 'POST', url: `/v1/webhooks/dead-letters/${id}/retry` });
    expect(retried.statusCode).toBe(202);
    expect(retried.json()).toEqual({ status: 'requeued', id });
    const requests = await operator.waitForRequests(4);
    expect(requests[3]?.headers['idempotency-key']).toBe('code:run-dead');
    expect(await listDead()).toEqual([]);
    await eventually(
      () => gw.store.queueStats(),
      (s) => s.depth === 0,
      'the ack',
    );

    const again = await gw.app.inject({ method: 'POST', url: `/v1/webhooks/dead-letters/${id}/retry` });
    expect(again.statusCode).toBe(404);
    expect(again.json().error.code).toBe('CALLBRIDGE_NOT_FOUND');
  });

  it('dead-letters at once, without a retry, an event the operator gateway refuses for good (a 4xx)', async () => {
    // Invariant: a permanent refusal is not retried for hours; only what may work later is.
    operator.respondWith(422);
    const gw = await start();
    expect((await deliverCode(gw, 'workflow_run', 'completed', 'run-refused')).statusCode).toBe(202);
    gw.gateway.startDrainer();
    const letters = await eventually(
      async () =>
        (await gw.app.inject({ method: 'GET', url: '/v1/webhooks/dead-letters' })).json()
          .deadLetters as Array<{
          attempts: number;
          lastError: string;
        }>,
      (l) => l.length === 1,
      'the dead letter',
    );
    expect(letters[0]).toMatchObject({ attempts: 1, lastError: 'operator gateway answered 422' });
    expect(operator.requests).toHaveLength(1);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_queue_deliveries_total', { outcome: 'retried' }),
    ).toBe(0);
  });

  it('rejects a nonsense limit on the dead-letter list', async () => {
    const gw = await start();
    const res = await gw.app.inject({ method: 'GET', url: '/v1/webhooks/dead-letters?limit=-3' });
    expect(res.statusCode).toBe(400);
  });

  it.skipIf(!redisUp)('drains each event once with two instances draining one Redis queue', async () => {
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    const storeA = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const storeB = await openRedisStore({ url: REDIS_URL, keyPrefix });
    try {
      const a = await start({ store: storeA });
      const b = await start({ store: storeB });
      for (let n = 0; n < 20; n++) {
        expect((await deliverCode(n % 2 ? a : b, 'workflow_run', 'completed', `run-${n}`)).statusCode).toBe(
          202,
        );
      }
      a.gateway.startDrainer();
      b.gateway.startDrainer();
      await operator.waitForRequests(20);
      await new Promise((resolve) => setTimeout(resolve, 200));
      const keys = operator.requests.map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(20);
      expect(new Set(keys).size).toBe(20);
    } finally {
      for (const gw of apps.splice(0)) await gw.close();
      await storeA.close();
      await storeB.close();
      await deleteKeys(keyPrefix);
    }
  });
});
