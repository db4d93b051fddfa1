// Campaign events reach the operator gateway as every gateway event does (same body, idempotency
// key and signature); a failed delivery is retried a few times and then logged, never thrown.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { campaignNotifier, gatewayEvent } from '../../src/outbound/events.js';
import { operatorGatewayNotifier } from '../../src/webhooks/notifier.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type FakeOperatorGateway, hmacOf, startFakeOperatorGateway } from '../webhooks/helpers.js';
import { FakeClock } from './fake-clock.js';
import { campaignRecord } from './fixtures.js';
import { QuickCarrier } from './quick-carrier.js';

const progress = {
  contacts: { pending: 0, dialing: 0, retry: 0, done: 2, total: 2 },
  outcomes: {
    completed: 1,
    voicemail_left: 0,
    machine: 0,
    busy: 1,
    no_answer: 0,
    failed: 0,
    cancelled: 0,
    dnc: 0,
    invalid: 0,
  },
  inFlight: 0,
  pace: { set: 1, achieved: 0.5 },
  etaSeconds: null,
};

let operator: FakeOperatorGateway | null = null;
let server: TestServer | null = null;
let carrier: QuickCarrier | null = null;
afterEach(async () => {
  carrier?.close();
  await server?.close();
  await operator?.close();
  server = null;
  operator = null;
});

describe('campaign events', () => {
  it('name the campaign, key completion once and each breaker pause by its instant', () => {
    const campaign = campaignRecord({ id: 'cmp_abc', state: 'completed' });
    expect(
      gatewayEvent({ name: 'campaign.completed', campaign, progress, atMs: Date.UTC(2025, 0, 6) }),
    ).toEqual({
      name: 'campaigns/campaign.completed',
      provider: 'campaigns',
      event: 'campaign.completed',
      idempotencyKey: 'campaigns:cmp_abc:completed',
      receivedAt: '2025-01-06T00:00:00.000Z',
      payload: {
        campaignId: 'cmp_abc',
        name: 'renewals',
        state: 'completed',
        pause: null,
        contacts: progress.contacts,
        outcomes: progress.outcomes,
      },
    });
    const paused = campaignRecord({
      id: 'cmp_abc',
      state: 'paused',
      pause: { by: 'breaker', message: 'm', atMs: 42 },
    });
    expect(
      gatewayEvent({ name: 'campaign.paused', campaign: paused, progress, atMs: 50 }).idempotencyKey,
    ).toBe('campaigns:cmp_abc:paused:42');
  });

  it('retries a failed delivery with a growing delay, then gives up without throwing', async () => {
    const clock = new FakeClock(0);
    const tries: number[] = [];
    const notify = campaignNotifier(
      async () => {
        tries.push(clock.now());
        throw new Error('operator gateway answered 502');
      },
      clock,
      pino({ level: 'silent' }),
    );
    notify({ name: 'campaign.completed', campaign: campaignRecord(), progress, atMs: 0 });
    await clock.advanceTo(60_000, async () => {
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(tries).toEqual([0, 2_000, 6_000, 14_000, 30_000]);
  });

  it('gives up at once on an event endpoint that refuses it for good (a 4xx)', async () => {
    // Invariant: a permanent refusal is not retried for hours; only what may work later is.
    operator = await startFakeOperatorGateway();
    operator.respondWith(404);
    const clock = new FakeClock(0);
    const deliver = operatorGatewayNotifier('campaigns', {
      url: operator.url,
      secret: null,
      timeoutMs: 2_000,
      now: () => clock.now(),
      logger: pino({ level: 'silent' }),
    });
    const delivered: Array<'ok' | 'failed'> = [];
    const notify = campaignNotifier(
      (event) =>
        deliver(event).then(
          () => void delivered.push('ok'),
          (err: unknown) => {
            delivered.push('failed');
            throw err;
          },
        ),
      clock,
      pino({ level: 'silent' }),
    );
    notify({ name: 'campaign.completed', campaign: campaignRecord(), progress, atMs: 0 });
    await operator.waitForRequests(1);
    await expect.poll(() => delivered).toEqual(['failed']);
    await clock.advanceTo(60_000, async () => {
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(operator.requests).toHaveLength(1);
  });

  it('reach the operator gateway signed, when a campaign completes', async () => {
    operator = await startFakeOperatorGateway();
    carrier = new QuickCarrier();
    server = await startServer(
      {
        AGENT_URL: 'ws://127.0.0.1:9',
        AGENT_API_KEY: 'test-key',
        ADMIN_TOKEN: 'admin-token-for-event-tests',
        OPERATOR_GATEWAY_URL: operator.url,
        OPERATOR_GATEWAY_SECRET: 'operator-secret',
      },
      { originator: carrier, dialerOptions: { idlePollMs: 20 } },
    );
    carrier.dialer = server.app.callbridge.outbound.dialer;
    const admin = async (path: string, body?: string, type = 'application/json') => {
      const res = await fetch(`${server!.baseUrl}/v1${path}`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer admin-token-for-event-tests',
          ...(body ? { 'content-type': type } : {}),
        },
        body,
      });
      return (await res.json()) as { id: string };
    };
    const { id } = await admin(
      '/campaigns',
      JSON.stringify({ name: 'signed', pacing: { callsPerSecond: 50 } }),
    );
    await admin(`/campaigns/${id}/contacts`, 'phone\n+12125550100\n', 'text/csv');
    await admin(`/campaigns/${id}/start`);
    const [request] = await operator.waitForRequests(1);
    expect(request?.headers['idempotency-key']).toBe(`campaigns:${id}:completed`);
    expect(request?.headers['x-callbridge-event']).toBe('campaigns/campaign.completed');
    expect(request?.json).toMatchObject({
      name: 'campaigns/campaign.completed',
      provider: 'campaigns',
      payload: { campaignId: id, state: 'completed', outcomes: { completed: 1 } },
    });
    const [, t, v1] =
      /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(request?.headers['x-callbridge-signature'])) ?? [];
    expect(v1).toBe(hmacOf('sha256', 'operator-secret', `${t}.${request?.body}`).toString('hex'));
  });
});
