// `deploy`: hex HMAC-SHA1 of the raw body in x-deploy-signature (docs/protocols/webhook-providers.md sections 2 and 3).
import { describe, expect, it } from 'vitest';
import { type GatewayApp, hmacOf, SECRETS, useGatewayWithOperator } from '../helpers.js';
import { oddJson, signatureSuite } from '../signature-suite.js';

const sign = (body: string, secret: string) => ({
  'x-deploy-signature': hmacOf('sha1', secret, body).toString('hex'),
});

signatureSuite({
  title: 'deploy',
  provider: 'deploy',
  secrets: SECRETS.deploy,
  body: oddJson({ id: 'event_2kY9', type: 'deployment.succeeded', payload: { deployment: { id: 'dpl_1' } } }),
  forwardedName: 'deploy/deploy.succeeded',
  idempotencyKey: 'deploy:event_2kY9',
  sign,
  unsigned: () => ({}),
  wrongEncoding: (body, secret) => ({
    'x-deploy-signature': hmacOf('sha1', secret, body).toString('base64'),
  }),
  malformed: () => ({ 'x-deploy-signature': 'xyz' }),
});

describe('deploy: events', () => {
  let gw: GatewayApp;
  useGatewayWithOperator((g) => {
    gw = g;
  });

  it.each(['succeeded', 'error', 'created', 'canceled'])(
    'maps deployment.%s to deploy/deploy.%s',
    async (what) => {
      const body = JSON.stringify({ id: `evt-${what}`, type: `deployment.${what}` });
      const res = await gw.app.inject({
        method: 'POST',
        url: '/webhooks/deploy',
        headers: sign(body, SECRETS.deploy[0]),
        payload: body,
      });
      expect(res.json()).toEqual({ status: 'forwarded', event: `deploy/deploy.${what}` });
    },
  );

  it('ignores deployment.promoted, which the provider does not list', async () => {
    const body = JSON.stringify({ id: 'evt-p', type: 'deployment.promoted' });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/webhooks/deploy',
      headers: sign(body, SECRETS.deploy[0]),
      payload: body,
    });
    expect(res.json()).toEqual({ status: 'ignored' });
  });
});
