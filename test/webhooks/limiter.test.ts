// docs/protocols/webhook-providers.md section 7: 20 authentication failures from one IP within a minute, then that IP is
// refused (429) until the window passes. The IP is Fastify's request.ip, so a forged
// X-Forwarded-For changes nothing; successes do not count; the check runs before the body is read.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openRedisStore } from '../../src/store/redis.js';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { type GatewayApp, hmacOf, metricValue, SECRETS, startGatewayApp } from './helpers.js';

const redisUp = await redisAvailable();
if (!redisUp) console.warn(`skipping the shared-limiter test: no Redis answers at ${REDIS_URL}`);

const body = JSON.stringify({ event_name: 'item:added' });
const good = { 'x-tasks-hmac-sha256': hmacOf('sha256', SECRETS.tasks[0], body).toString('base64') };
const bad = { 'x-tasks-hmac-sha256': hmacOf('sha256', 'guessed', body).toString('base64') };

function send(
  gw: GatewayApp,
  headers: Record<string, string>,
  remoteAddress = '198.51.100.20',
  payload = body,
) {
  return gw.app.inject({ method: 'POST', url: '/webhooks/tasks', headers, payload, remoteAddress });
}

async function fail(
  gw: GatewayApp,
  times: number,
  remoteAddress?: string,
  extra: (i: number) => Record<string, string> = () => ({}),
) {
  for (let i = 0; i < times; i++) {
    const res = await send(gw, { ...bad, ...extra(i) }, remoteAddress);
    expect(res.statusCode).toBe(403);
  }
}

describe('authentication-failure limiter', () => {
  let gw: GatewayApp | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await gw?.close();
    gw = undefined;
  });

  it('refuses the 21st failure within a minute with 429, and then every request from that IP', async () => {
    gw = await startGatewayApp();
    await fail(gw, 20);
    const refused = await send(gw, bad);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toEqual({
      error: { code: 'CALLBRIDGE_RATE_LIMITED', message: expect.any(String) },
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect((await send(gw, good)).statusCode).toBe(429);
    // Another address is unaffected.
    expect((await send(gw, good, '198.51.100.21')).statusCode).toBe(200);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_rate_limited_total', { provider: 'tasks' }),
    ).toBe(2);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'tasks',
        outcome: 'rate_limited',
      }),
    ).toBe(2);
  });

  it('is not escaped by forging X-Forwarded-For', async () => {
    gw = await startGatewayApp();
    await fail(gw, 20, undefined, (i) => ({ 'x-forwarded-for': `203.0.113.${i}` }));
    expect((await send(gw, { ...good, 'x-forwarded-for': '192.0.2.77' })).statusCode).toBe(429);
  });

  it('is not escaped by forging X-Forwarded-For through an untrusted hop when proxies are trusted', async () => {
    gw = await startGatewayApp({ trustProxy: ['10.0.0.0/8'] });
    await fail(gw, 20, '198.51.100.30', (i) => ({ 'x-forwarded-for': `203.0.113.${i}` }));
    expect((await send(gw, { ...good, 'x-forwarded-for': '192.0.2.78' }, '198.51.100.30')).statusCode).toBe(
      429,
    );
  });

  it('does not count successes', async () => {
    gw = await startGatewayApp();
    await fail(gw, 19);
    for (let i = 0; i < 30; i++) {
      const payload = JSON.stringify({ event_name: 'item:added', n: i });
      const signed = {
        'x-tasks-hmac-sha256': hmacOf('sha256', SECRETS.tasks[1], payload).toString('base64'),
      };
      const ok = await send(gw, signed, undefined, payload);
      expect(ok.statusCode).toBe(200);
    }
    await fail(gw, 1);
    expect((await send(gw, bad)).statusCode).toBe(429);
  });

  it('lets the IP in again once the minute has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-01T12:00:00Z'));
    gw = await startGatewayApp();
    await fail(gw, 20);
    expect((await send(gw, good)).statusCode).toBe(429);
    vi.setSystemTime(new Date('2025-03-01T12:00:59Z'));
    expect((await send(gw, good)).statusCode).toBe(429);
    vi.setSystemTime(new Date('2025-03-01T12:01:00.5Z'));
    expect((await send(gw, good)).statusCode).toBe(200);
  });

  it('refuses a limited IP before reading its body', async () => {
    gw = await startGatewayApp({ env: { WEBHOOK_BODY_LIMIT_BYTES: '1024' } });
    await fail(gw, 20);
    // An oversize body would be 413 if it were read; the limiter answers first.
    expect((await send(gw, good, undefined, 'x'.repeat(5000))).statusCode).toBe(429);
  });

  it.skipIf(!redisUp)('counts failures across instances sharing Redis', async () => {
    const keyPrefix = `callbridge-test:${randomUUID()}:`;
    const storeA = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const storeB = await openRedisStore({ url: REDIS_URL, keyPrefix });
    const a = await startGatewayApp({ store: storeA });
    const b = await startGatewayApp({ store: storeB });
    try {
      await fail(a, 10);
      await fail(b, 10);
      expect((await send(a, good)).statusCode).toBe(429);
      expect((await send(b, good)).statusCode).toBe(429);
    } finally {
      await a.close();
      await b.close();
      await storeA.close();
      await storeB.close();
      await deleteKeys(keyPrefix);
    }
  });
});
