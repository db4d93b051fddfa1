// Notification functions post each event to the operator gateway as JSON, signed with
// OPERATOR_GATEWAY_SECRET and carrying its Idempotency-Key, within a timeout; with no gateway URL,
// events are logged only.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  SECRETS,
  startFakeOperatorGateway,
  startGatewayApp,
} from './helpers.js';

const body = JSON.stringify({ id: 'evt_n1', type: 'deployment.error', payload: { note: 'caf\u00e9' } });
const headers = { 'x-deploy-signature': hmacOf('sha1', SECRETS.deploy[0], body).toString('hex') };

describe('operator gateway notifications', () => {
  let gw: GatewayApp | undefined;
  let operator: FakeOperatorGateway;
  beforeEach(async () => {
    operator = await startFakeOperatorGateway();
  });
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
    await operator.close();
  });

  it('posts the event as JSON with a verifiable signature and its idempotency key', async () => {
    gw = await startGatewayApp({
      env: { OPERATOR_GATEWAY_URL: operator.url, OPERATOR_GATEWAY_SECRET: 'operator-secret' },
    });
    const res = await gw.app.inject({ method: 'POST', url: '/webhooks/deploy', headers, payload: body });
    expect(res.statusCode).toBe(200);
    const [request] = operator.requests;
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['idempotency-key']).toBe('deploy:evt_n1');
    expect(request?.json).toEqual({
      name: 'deploy/deploy.error',
      provider: 'deploy',
      event: 'deploy.error',
      idempotencyKey: 'deploy:evt_n1',
      receivedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      payload: JSON.parse(body),
    });
    const signature = String(request?.headers['x-callbridge-signature']);
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature);
    expect(match).not.toBeNull();
    const [, t, v1] = match!;
    expect(Math.abs(Number(t) - Date.now() / 1000)).toBeLessThan(60);
    expect(v1).toBe(hmacOf('sha256', 'operator-secret', `${t}.${request?.body}`).toString('hex'));
  });

  it('gives up after the timeout and answers 503 so the provider retries', async () => {
    gw = await startGatewayApp({
      env: { OPERATOR_GATEWAY_URL: operator.url },
      options: { forwardTimeoutMs: 150 },
    });
    operator.hold();
    const started = Date.now();
    const res = await gw.app.inject({ method: 'POST', url: '/webhooks/deploy', headers, payload: body });
    expect(res.statusCode).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('logs the event, and forwards nothing, when no operator gateway is configured', async () => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    gw = await startGatewayApp({ logger: pino({ level: 'info' }, sink) });
    const res = await gw.app.inject({ method: 'POST', url: '/webhooks/deploy', headers, payload: body });
    expect(res.json()).toEqual({ status: 'forwarded', event: 'deploy/deploy.error' });
    expect(lines).toContainEqual(
      expect.objectContaining({ event: 'deploy/deploy.error', idempotencyKey: 'deploy:evt_n1' }),
    );
    // No secret or signature ever reaches the log.
    const text = JSON.stringify(lines);
    expect(text).not.toContain(SECRETS.deploy[0]);
    expect(text).not.toContain(headers['x-deploy-signature']);
  });
});
