// `inbox`: the application webhook (base64 HMAC-SHA256 of `<ms timestamp>:<raw body>`, 5 minutes)
// and the rules webhook (base64 HMAC-SHA1 of the body's compact JSON, its own secret), told apart
// by x-inbox-request-timestamp; the validation challenge (docs/protocols/webhook-providers.md sections 2 to 4).
import { describe, expect, it, vi } from 'vitest';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  SECRETS,
  useGatewayWithOperator,
} from '../helpers.js';
import { oddJson, signatureSuite } from '../signature-suite.js';

const signApp = (body: string, secret: string, ts = Date.now()) => ({
  'x-inbox-request-timestamp': String(ts),
  'x-inbox-signature': hmacOf('sha256', secret, `${ts}:${body}`).toString('base64'),
});
const signRules = (body: string, secret: string) => ({
  'x-inbox-signature': hmacOf('sha1', secret, body).toString('base64'),
});

signatureSuite({
  title: 'inbox (application webhook)',
  provider: 'inbox',
  secrets: SECRETS.inbox,
  body: oddJson({ id: 'msg_app_1', type: 'inbound', conversation: { id: 'cnv_1' } }),
  forwardedName: 'inbox/message.received',
  idempotencyKey: 'inbox:msg_app_1',
  sign: (body, secret) => signApp(body, secret),
  unsigned: () => ({ 'x-inbox-request-timestamp': String(Date.now()) }),
  wrongEncoding: (body, secret) => {
    const ts = Date.now();
    return {
      'x-inbox-request-timestamp': String(ts),
      'x-inbox-signature': hmacOf('sha256', secret, `${ts}:${body}`).toString('hex'),
    };
  },
  malformed: () => ({ 'x-inbox-request-timestamp': String(Date.now()), 'x-inbox-signature': '%%%' }),
  expired: (body, secret) => signApp(body, secret, Date.now() - 5 * 60_000 - 1_000),
});

signatureSuite({
  title: 'inbox (rules webhook)',
  provider: 'inbox',
  secrets: SECRETS.inbox_rules,
  body: oddJson({ id: 'msg_rules_1', type: 'outbound' }),
  forwardedName: 'inbox/message.sent',
  idempotencyKey: 'inbox:msg_rules_1',
  sign: signRules,
  unsigned: () => ({}),
  wrongEncoding: (body, secret) => ({ 'x-inbox-signature': hmacOf('sha1', secret, body).toString('hex') }),
  malformed: () => ({ 'x-inbox-signature': 'not-base64-at-all!' }),
  acceptsCompactJson: true,
});

describe('inbox', () => {
  let gw: GatewayApp;
  let operator: FakeOperatorGateway;
  useGatewayWithOperator((g, o) => {
    gw = g;
    operator = o;
  });

  const post = (body: string, headers: Record<string, string>) =>
    gw.app.inject({
      method: 'POST',
      url: '/webhooks/inbox',
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    });

  it('answers a signed validation challenge with {"challenge": value}, forwarding nothing', async () => {
    const body = JSON.stringify({ type: 'sync' });
    const res = await post(body, { ...signApp(body, SECRETS.inbox[0]), 'x-inbox-challenge': 'c-8f14e45f' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ challenge: 'c-8f14e45f' });
    expect(operator.requests).toHaveLength(0);
  });

  it('does not answer a challenge whose signature fails', async () => {
    const body = JSON.stringify({ type: 'sync' });
    const res = await post(body, { ...signApp(body, 'wrong'), 'x-inbox-challenge': 'c-1' });
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain('c-1');
  });

  it("rejects an application webhook signed with the rules secret, and a rules webhook signed with the application's", async () => {
    const body = JSON.stringify({ id: 'm1', type: 'inbound' });
    expect((await post(body, signApp(body, SECRETS.inbox_rules[0]))).statusCode).toBe(403);
    expect((await post(body, signRules(body, SECRETS.inbox[0]))).statusCode).toBe(403);
  });

  it('rejects a timestamp given in seconds instead of milliseconds', async () => {
    const body = JSON.stringify({ id: 'm2', type: 'inbound' });
    const res = await post(body, signApp(body, SECRETS.inbox[0], Math.floor(Date.now() / 1000)));
    expect(res.statusCode).toBe(403);
  });

  it.each([
    ['inbound', 'inbox/message.received'],
    ['outbound', 'inbox/message.sent'],
    ['assign', 'inbox/assignee.changed'],
  ])('maps %s to %s', async (type, name) => {
    const body = JSON.stringify({ id: `m-${type}`, type });
    expect((await post(body, signApp(body, SECRETS.inbox[0]))).json()).toEqual({
      status: 'forwarded',
      event: name,
    });
  });

  it('parses a rules webhook signed over its compact JSON once, for the check and the event alike', async () => {
    const body = oddJson({ id: 'm-once', type: 'outbound' });
    const compact = JSON.stringify(JSON.parse(body));
    const parse = vi.spyOn(JSON, 'parse');
    try {
      const res = await post(body, signRules(compact, SECRETS.inbox_rules[0]));
      expect(res.json()).toEqual({ status: 'forwarded', event: 'inbox/message.sent' });
      expect(parse.mock.calls.filter(([text]) => text === body)).toHaveLength(1);
    } finally {
      parse.mockRestore();
    }
  });
});
