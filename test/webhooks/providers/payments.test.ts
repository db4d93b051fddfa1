// `payments`: `payments-signature: t=<unix s>,v1=<hex>[,v1=…]`, hex HMAC-SHA256 of `<t>.<raw body>`,
// 300 s tolerance, any v1 may match; served only while its secret is configured (docs/protocols/webhook-providers.md sections 2 and 3).
import { afterEach, describe, expect, it } from 'vitest';
import { type GatewayApp, hmacOf, SECRETS, startGatewayApp } from '../helpers.js';
import { oddJson, signatureSuite } from '../signature-suite.js';

const nowS = () => Math.floor(Date.now() / 1000);
const v1 = (secret: string, t: number, body: string) =>
  hmacOf('sha256', secret, `${t}.${body}`).toString('hex');
const sign = (body: string, secret: string, t = nowS()) => ({
  'payments-signature': `t=${t},v1=${v1(secret, t, body)}`,
});

signatureSuite({
  title: 'payments',
  provider: 'payments',
  secrets: SECRETS.payments,
  body: oddJson({ id: 'evt_1NG8Du2eZvKYlo2C', type: 'invoice.paid', data: { object: { id: 'in_1' } } }),
  forwardedName: 'payments/invoice.paid',
  idempotencyKey: 'payments:evt_1NG8Du2eZvKYlo2C',
  sign: (body, secret) => sign(body, secret),
  unsigned: () => ({}),
  wrongEncoding: (body, secret) => {
    const t = nowS();
    return {
      'payments-signature': `t=${t},v1=${hmacOf('sha256', secret, `${t}.${body}`).toString('base64')}`,
    };
  },
  malformed: () => ({ 'payments-signature': 'v1=,t=yesterday' }),
  expired: (body, secret) => sign(body, secret, nowS() - 301),
});

describe('payments', () => {
  let gw: GatewayApp | undefined;
  afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  it('accepts a header with several v1 values when any one matches', async () => {
    gw = await startGatewayApp();
    const body = JSON.stringify({ id: 'evt_2', type: 'charge.refunded' });
    const t = nowS();
    const header = `t=${t},v1=${v1('old-secret', t, body)},v1=${v1(SECRETS.payments[1], t, body)},v0=abc`;
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/payments',
      headers: { 'payments-signature': header },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'forwarded', event: 'payments/charge.refunded' });
  });

  it('is not served, and not listed, while no payments secret is configured', async () => {
    gw = await startGatewayApp({ env: { WEBHOOK_SECRET_PAYMENTS: '' } });
    const body = JSON.stringify({ id: 'evt_3', type: 'invoice.paid' });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/payments',
      headers: sign(body, 'x'),
      payload: body,
    });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('CALLBRIDGE_NOT_FOUND');
    expect((await gw.gateway.info()).providers).toEqual(['tasks', 'inbox', 'deploy', 'code']);
  });
});
