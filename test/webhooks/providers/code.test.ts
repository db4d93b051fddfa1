// `code`: `sha256=` + hex HMAC-SHA256 of the raw body in x-hub-signature-256 (docs/protocols/webhook-providers.md
// sections 2 and 3). Signed with @octokit/webhooks-methods, independently of the project's code.
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import {
  type FakeOperatorGateway,
  type GatewayApp,
  hmacOf,
  SECRETS,
  useGatewayWithOperator,
} from '../helpers.js';
import { oddJson, signatureSuite } from '../signature-suite.js';

const DELIVERY = '72d3162e-cc78-11e3-81ab-4c9367dc0958';
const eventHeaders = { 'x-code-event': 'workflow_run', 'x-code-delivery': DELIVERY };

signatureSuite({
  title: 'code',
  provider: 'code',
  secrets: SECRETS.code,
  body: oddJson({ action: 'completed', workflow_run: { id: 30433642, conclusion: 'success' } }),
  forwardedName: 'code/workflow_run.completed',
  idempotencyKey: `code:${DELIVERY}`,
  sign: async (body, secret) => ({ ...eventHeaders, 'x-hub-signature-256': await octokitSign(secret, body) }),
  unsigned: () => eventHeaders,
  wrongEncoding: (body, secret) => ({
    ...eventHeaders,
    'x-hub-signature-256': `sha256=${hmacOf('sha256', secret, body).toString('base64')}`,
  }),
  malformed: (body) => ({
    ...eventHeaders,
    'x-hub-signature-256': hmacOf('sha256', SECRETS.code[0], body).toString('hex'),
  }),
});

describe('code: events', () => {
  let gw: GatewayApp;
  let operator: FakeOperatorGateway;
  useGatewayWithOperator((g, o) => {
    gw = g;
    operator = o;
  });

  async function send(event: string, body: string, delivery: string, aliases = false) {
    const headers = aliases
      ? { 'x-github-event': event, 'x-github-delivery': delivery }
      : { 'x-code-event': event, 'x-code-delivery': delivery };
    return gw.app.inject({
      method: 'POST',
      url: '/webhooks/code',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'x-hub-signature-256': await octokitSign(SECRETS.code[0], body),
      },
      payload: body,
    });
  }

  it('maps package + published to code/package.published', async () => {
    const res = await send('package', JSON.stringify({ action: 'published', package: { name: 'x' } }), 'd-1');
    expect(res.json()).toEqual({ status: 'forwarded', event: 'code/package.published' });
  });

  it('reads the x-github-event and x-github-delivery aliases', async () => {
    const res = await send('workflow_run', JSON.stringify({ action: 'completed' }), 'gh-delivery-1', true);
    expect(res.json()).toEqual({ status: 'forwarded', event: 'code/workflow_run.completed' });
    expect(operator.requests[0]?.headers['idempotency-key']).toBe('code:gh-delivery-1');
  });

  it('ignores workflow_run + requested and ping', async () => {
    expect((await send('workflow_run', JSON.stringify({ action: 'requested' }), 'd-2')).json()).toEqual({
      status: 'ignored',
    });
    expect((await send('ping', JSON.stringify({ zen: 'Keep it logically awesome.' }), 'd-3')).json()).toEqual(
      { status: 'ignored' },
    );
    expect(operator.requests).toHaveLength(0);
  });
});
