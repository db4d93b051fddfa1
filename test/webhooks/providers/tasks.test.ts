// `tasks`: base64 HMAC-SHA256 of the raw body in x-tasks-hmac-sha256 (docs/protocols/webhook-providers.md sections 2 and 3).
import { describe, expect, it } from 'vitest';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  SECRETS,
  useGatewayWithOperator,
} from '../helpers.js';
import { oddJson, signatureSuite } from '../signature-suite.js';

const DELIVERY = 'd-5b1e7c4a';
const sign = (body: string, secret: string) => ({
  'x-tasks-hmac-sha256': hmacOf('sha256', secret, body).toString('base64'),
  'x-tasks-delivery-id': DELIVERY,
});

signatureSuite({
  title: 'tasks',
  provider: 'tasks',
  secrets: SECRETS.tasks,
  body: oddJson({ event_name: 'item:added', event_data: { id: '6X7rM8997g3RQmvh', content: 'Buy milk' } }),
  forwardedName: 'tasks/task.created',
  idempotencyKey: `tasks:${DELIVERY}`,
  sign,
  unsigned: () => ({ 'x-tasks-delivery-id': DELIVERY }),
  wrongEncoding: (body, secret) => ({
    ...sign(body, secret),
    'x-tasks-hmac-sha256': hmacOf('sha256', secret, body).toString('hex'),
  }),
  malformed: () => ({ 'x-tasks-hmac-sha256': 'sha256=not base64!', 'x-tasks-delivery-id': DELIVERY }),
});

describe('tasks: events', () => {
  let gw: GatewayApp;
  let operator: FakeOperatorGateway;
  useGatewayWithOperator((g, o) => {
    gw = g;
    operator = o;
  });

  it.each([
    ['item:added', 'tasks/task.created'],
    ['item:completed', 'tasks/task.completed'],
    ['note:added', 'tasks/comment.added'],
  ])('maps %s to %s', async (type, name) => {
    const body = JSON.stringify({ event_name: type, event_data: {} });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: sign(body, SECRETS.tasks[0]),
      payload: body,
    });
    expect(res.json()).toEqual({ status: 'forwarded', event: name });
  });

  it('acknowledges and ignores an event type the provider does not list', async () => {
    const body = JSON.stringify({ event_name: 'project:archived' });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/tasks',
      headers: sign(body, SECRETS.tasks[0]),
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ignored' });
    expect(operator.requests).toHaveLength(0);
  });

  it('keys an event without a delivery id by the SHA-256 of provider and raw body', async () => {
    const body = JSON.stringify({ event_name: 'item:completed' });
    const headers = { 'x-tasks-hmac-sha256': hmacOf('sha256', SECRETS.tasks[0], body).toString('base64') };
    await gw.app.inject({ method: 'POST', url: '/webhooks/tasks', headers, payload: body });
    const { createHash } = await import('node:crypto');
    const digest = createHash('sha256').update(`tasks${body}`).digest('hex');
    expect(operator.requests[0]?.headers['idempotency-key']).toBe(`tasks:sha256:${digest}`);
  });
});
