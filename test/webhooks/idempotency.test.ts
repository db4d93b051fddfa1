// docs/protocols/webhook-providers.md section 5: duplicate deliveries from retrying providers are safe. A key already
// processed answers 200 {"status":"duplicate"} and is never forwarded again, within one process,
// across a restart (SQLite) and across instances (Redis); concurrent duplicates never both forward;
// a failed forward answers 503 and leaves the key free for the provider's retry.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  metricValue,
  SECRETS,
  startFakeOperatorGateway,
  startGatewayApp,
} from './helpers.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the cross-instance idempotency test: no Redis answers at ${REDIS_URL}`);

const body = JSON.stringify({ id: 'evt_dup_1', type: 'deployment.succeeded' });
const headers = {
  'content-type': 'application/json',
  'x-deploy-signature': hmacOf('sha1', SECRETS.deploy[0], body).toString('hex'),
};
const deliver = (gw: GatewayApp) =>
  gw.app.inject({ method: 'POST', url: '/webhooks/deploy', headers, payload: body });

describe('idempotency', () => {
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
    const gw = await startGatewayApp({ ...opts, env: { OPERATOR_GATEWAY_URL: operator.url, ...opts.env } });
    apps.push(gw);
    return gw;
  };

  it('forwards a duplicate delivery once and answers the repeat {"status":"duplicate"}', async () => {
    const gw = await start();
    expect((await deliver(gw)).json()).toEqual({ status: 'forwarded', event: 'deploy/deploy.succeeded' });
    const again = await deliver(gw);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ status: 'duplicate' });
    expect(operator.requests).toHaveLength(1);
    expect(await metricValue(gw.metrics, 'callbridge_webhook_duplicates_total', { provider: 'deploy' })).toBe(
      1,
    );
  });

  it('never forwards two concurrent deliveries of one event both', async () => {
    const gw = await start();
    operator.hold();
    const first = deliver(gw);
    await operator.waitForRequests(1);
    const second = await deliver(gw);
    expect(second.statusCode).toBe(503);
    expect(second.headers['retry-after']).toBe('5');
    operator.release();
    expect((await first).statusCode).toBe(200);
    expect((await deliver(gw)).json()).toEqual({ status: 'duplicate' });
    expect(operator.requests).toHaveLength(1);
  });

  it('answers 503 when forwarding fails, and processes the provider retry', async () => {
    const gw = await start();
    operator.respondWith(500);
    const failed = await deliver(gw);
    expect(failed.statusCode).toBe(503);
    expect(failed.json().error.code).toBe('CALLBRIDGE_UNAVAILABLE');
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'deploy',
        outcome: 'forward_failed',
      }),
    ).toBe(1);
    operator.respondWith(200);
    expect((await deliver(gw)).json()).toEqual({ status: 'forwarded', event: 'deploy/deploy.succeeded' });
    expect((await deliver(gw)).json()).toEqual({ status: 'duplicate' });
    expect(operator.requests).toHaveLength(2);
  });

  it('remembers a processed key across a restart on the same SQLite file', async () => {
    const first = await start();
    await deliver(first);
    const file = join(first.config.dataDir, 'callbridge.db');
    await first.gateway.close();
    await first.app.close();
    await first.store.close();

    const store = openSqliteStore({ file });
    const second = await start({ store });
    expect((await deliver(second)).json()).toEqual({ status: 'duplicate' });
    expect(operator.requests).toHaveLength(1);
    await store.close();
  });

  it.skipIf(!redisUp)(
    'forwards once when a duplicate reaches each of two instances sharing Redis',
    async () => {
      const keyPrefix = `callbridge-test:${randomUUID()}:`;
      const storeA = await openRedisStore({ url: REDIS_URL, keyPrefix });
      const storeB = await openRedisStore({ url: REDIS_URL, keyPrefix });
      try {
        const a = await start({ store: storeA });
        const b = await start({ store: storeB });
        const answers = await Promise.all([deliver(a), deliver(b)]);
        const statuses = answers.map((r) => r.statusCode).sort();
        // One forwards; the other saw it in progress (503, the provider retries) or done.
        expect(statuses[0]).toBe(200);
        expect(operator.requests).toHaveLength(1);
        expect((await deliver(b)).json()).toEqual({ status: 'duplicate' });
        expect((await deliver(a)).json()).toEqual({ status: 'duplicate' });
        expect(operator.requests).toHaveLength(1);
      } finally {
        for (const gw of apps.splice(0)) await gw.close();
        await storeA.close();
        await storeB.close();
        await deleteKeys(keyPrefix);
      }
    },
  );
});
