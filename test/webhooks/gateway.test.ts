// The gateway's request surface: unknown providers, body limit, bodies that are not JSON, the raw
// body parser staying in its scope, and what `GET /` shows (docs/protocols/webhook-providers.md sections 1 and 9).
import { join } from 'node:path';
import Fastify from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { webhookGateway } from '../../src/webhooks/plugin.js';
import { type GatewayApp, gatewayConfig, hmacOf, metricValue, SECRETS, startGatewayApp } from './helpers.js';

const signTasks = (body: string | Buffer) => ({
  'x-tasks-hmac-sha256': hmacOf('sha256', SECRETS.tasks[0], body).toString('base64'),
});

describe('webhook gateway', () => {
  let gw: GatewayApp | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('answers 404 in the error format for an unknown provider', async () => {
    gw = await startGatewayApp();
    const res = await gw.app.inject({ method: 'POST', url: '/webhooks/pager', payload: '{}' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: { code: 'CALLBRIDGE_NOT_FOUND', message: 'no webhook provider "pager"' },
    });
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'unknown',
        outcome: 'not_found',
      }),
    ).toBe(1);
  });

  it('answers 413 in the error format for a body over the limit, before verifying anything', async () => {
    gw = await startGatewayApp({ env: { WEBHOOK_BODY_LIMIT_BYTES: '1024' } });
    const body = JSON.stringify({ event_name: 'item:added', pad: 'x'.repeat(2000) });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: signTasks(body),
      payload: body,
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      error: { code: 'CALLBRIDGE_BODY_TOO_LARGE', message: 'webhook body exceeds 1024 bytes' },
    });
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'tasks',
        outcome: 'too_large',
      }),
    ).toBe(1);
    // A body just under the limit goes through.
    const small = JSON.stringify({ event_name: 'item:added', pad: 'x'.repeat(900) });
    expect(
      (
        await gw.app.inject({
          method: 'POST',
          url: '/webhooks/tasks',
          headers: signTasks(small),
          payload: small,
        })
      ).statusCode,
    ).toBe(200);
  });

  it('answers 413 to an oversize body sent without a content-length (chunked)', async () => {
    gw = await startGatewayApp({ env: { WEBHOOK_BODY_LIMIT_BYTES: '1024' } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const address = gw.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const chunks = (async function* () {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(500, 0x61);
    })();
    const res = await fetch(`http://127.0.0.1:${port}/webhooks/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunks as unknown as RequestInit['body'],
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BODY_TOO_LARGE');
  });

  it('answers 400 to a validly signed body that is not JSON, counting no auth failure', async () => {
    gw = await startGatewayApp();
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: signTasks('not json'),
      payload: 'not json',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    expect(await metricValue(gw.metrics, 'callbridge_webhook_auth_failures_total')).toBe(0);
  });

  it.each([
    ['empty', ''],
    ['without a subtype', 'json'],
    ['of separators only', ';;'],
    ['with spaces in the type', 'application json'],
  ])(
    'processes a signed request whose Content-Type is %s, counted in exactly one outcome',
    async (_name, contentType) => {
      // A signed delivery is judged by its bytes, never refused with an uncounted 415 for its type.
      gw = await startGatewayApp();
      const body = JSON.stringify({ event_name: 'item:added', event_data: { id: 'x' } });
      const res = await gw.app.inject({
        method: 'POST',
        url: '/webhooks/tasks',
        headers: { ...signTasks(body), 'content-type': contentType },
        payload: body,
      });
      expect(res.statusCode).toBeLessThan(500);
      expect(res.statusCode).not.toBe(415);
      const counted = await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'tasks',
      });
      expect(counted).toBe(1);
    },
  );

  it('counts an unsigned request with an odd Content-Type as a bad signature, not an uncounted 415', async () => {
    gw = await startGatewayApp();
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: { 'content-type': 'odd', 'x-tasks-hmac-sha256': 'AAAA' },
      payload: '{}',
    });
    expect(res.statusCode).toBe(403);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_requests_total', {
        provider: 'tasks',
        outcome: 'bad_signature',
      }),
    ).toBe(1);
  });

  it('rejects every request of a provider that has no secret configured', async () => {
    gw = await startGatewayApp({ env: { WEBHOOK_SECRET_DEPLOY: '' } });
    const body = JSON.stringify({ id: 'e', type: 'deployment.created' });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/deploy',
      headers: { 'x-deploy-signature': hmacOf('sha1', '', body).toString('hex') },
      payload: body,
    });
    expect(res.statusCode).toBe(403);
    expect(
      await metricValue(gw.metrics, 'callbridge_webhook_auth_failures_total', {
        provider: 'deploy',
        reason: 'no_secret',
      }),
    ).toBe(1);
  });

  it('keeps its raw-body parser to its own routes', async () => {
    gw = await startGatewayApp();
    // A sibling route registered after the gateway still gets parsed JSON.
    const app = Fastify();
    const dir = gw.config.dataDir;
    const store = openSqliteStore({ file: join(dir, 'other.db') });
    const gateway = webhookGateway({
      config: gw.config,
      store,
      metrics: createMetrics('global'),
      logger: pino({ level: 'silent' }),
    });
    await app.register(gateway.plugin);
    app.post('/json', async (request) => ({ parsed: request.body }));
    const res = await app.inject({ method: 'POST', url: '/json', payload: { a: 1 } });
    expect(res.json()).toEqual({ parsed: { a: 1 } });
    await app.close();
    await store.close();
  });

  it('reports the endpoint, the providers and when each last had a verified delivery, across restarts', async () => {
    gw = await startGatewayApp();
    expect(await gw.gateway.info()).toEqual({
      endpoint: '/webhooks/:provider',
      providers: ['tasks', 'inbox', 'deploy', 'code', 'payments'],
      lastVerifiedAt: { tasks: null, inbox: null, deploy: null, code: null, payments: null },
    });

    // A failed signature and a challenge do not count as a delivery.
    await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: { 'x-tasks-hmac-sha256': 'AAAA' },
      payload: '{}',
    });
    const ts = String(Date.now());
    const challenge = '{"type":"sync"}';
    await gw.app.inject({
      method: 'POST',
      url: '/webhooks/inbox',
      headers: {
        'x-inbox-request-timestamp': ts,
        'x-inbox-signature': hmacOf('sha256', SECRETS.inbox[0], `${ts}:${challenge}`).toString('base64'),
        'x-inbox-challenge': 'abc',
      },
      payload: challenge,
    });
    expect((await gw.gateway.info()).lastVerifiedAt).toMatchObject({ tasks: null, inbox: null });

    const before = Date.now();
    const body = JSON.stringify({ event_name: 'item:added' });
    expect(
      (
        await gw.app.inject({
          method: 'POST',
          url: '/webhooks/tasks',
          headers: signTasks(body),
          payload: body,
        })
      ).statusCode,
    ).toBe(200);
    const at = (await gw.gateway.info()).lastVerifiedAt.tasks;
    expect(at).not.toBeNull();
    expect(Date.parse(at!)).toBeGreaterThanOrEqual(before - 1);

    // A new process over the same store still knows.
    const file = join(gw.config.dataDir, 'callbridge.db');
    const store = openSqliteStore({ file });
    const restarted = webhookGateway({
      config: gatewayConfig(),
      store,
      metrics: createMetrics('global'),
      logger: pino({ level: 'silent' }),
    });
    expect((await restarted.info()).lastVerifiedAt.tasks).toBe(at);
    await store.close();
  });
});
