// Vonage's events about an outbound call, on a real Fastify app holding only the Vonage routes,
// with a fake call intake: the final status and the machine-detection results, read from events
// posted to the event URL that carries the sealed context in its query. Signed requests are made
// with the `jsonwebtoken` package (test/helpers/vonage-carrier.ts), independently of the project's code.
import { afterEach, describe, expect, it } from 'vitest';
import { vonageRoutes } from '../../../src/carriers/vonage/routes.js';
import type { OutboundContext } from '../../../src/call/outbound/outbound-context.js';
import { type CarrierApp, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import { newVonageUuid, type VonageSigning, vonageWebhookJwt } from '../../helpers/vonage-carrier.js';

const SECRET = 'vonage-signature-secret-for-tests-0001';
const SIGNING: VonageSigning = { secret: SECRET };
const SEALED = 'c1.eyJhIjoxfQ.c2lnbmVk';
const CONTEXT: OutboundContext = {
  attemptId: 'cmp_1.3.1',
  campaignId: 'cmp_1',
  contact: 3,
  profile: 'default',
  variables: {},
  amd: { mode: 'voicemail', voicemailText: 'Call us back.', voicemailAudioUrl: null },
};

let server: CarrierApp | undefined;
let intake: FakeIntake;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(): Promise<string> {
  intake = createFakeIntake();
  intake.outboundContext = async (_carrier, ref) => (ref === SEALED ? { ref, context: CONTEXT } : null);
  server = await startCarrierApp(
    vonageRoutes({
      intake,
      signatureSecrets: [SECRET],
      applicationId: null,
      apiKey: null,
      refuseUnverified: false,
    }),
  );
  return server.baseUrl;
}

async function postEvent(
  baseUrl: string,
  event: Record<string, unknown> | string,
  opts: { query?: string; signing?: VonageSigning | null } = {},
) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const signing = opts.signing === undefined ? SIGNING : opts.signing;
  if (signing !== null) headers.authorization = `Bearer ${vonageWebhookJwt(body, signing)}`;
  const query = opts.query ?? `?context=${SEALED}`;
  const res = await fetch(`${baseUrl}/carriers/vonage/events${query}`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}

const event = (fields: Record<string, unknown>) => ({
  uuid: newVonageUuid(),
  conversation_uuid: 'CON-1',
  direction: 'outbound',
  from: '447700900000',
  to: '447700900172',
  timestamp: new Date().toISOString(),
  ...fields,
});

describe("vonage's events of an outbound call", () => {
  it.each([
    ['busy', 'busy'],
    ['timeout', 'no_answer'],
    ['unanswered', 'no_answer'],
    ['failed', 'failed'],
    ['rejected', 'failed'],
    ['cancelled', 'canceled'],
    ['completed', 'completed'],
  ])('reads status %s as the final status %s', async (status, final) => {
    const baseUrl = await start();
    const posted = event({ status });
    expect((await postEvent(baseUrl, posted)).status).toBe(204);
    expect(intake.statuses).toEqual([
      {
        carrier: 'vonage',
        callSid: posted.uuid,
        from: '+447700900000',
        to: '+447700900172',
        context: CONTEXT,
        status: final,
        reason: `Vonage ${status}`,
        durationMs: null,
      },
    ]);
  });

  it("carries Vonage's detail and the call's duration", async () => {
    const baseUrl = await start();
    await postEvent(baseUrl, event({ status: 'completed', duration: '42', detail: 'remote_hangup' }));
    expect(intake.statuses[0]).toMatchObject({
      reason: 'Vonage completed (remote_hangup)',
      durationMs: 42_000,
    });
  });

  it('reports nothing for progress events', async () => {
    const baseUrl = await start();
    for (const status of ['started', 'ringing', 'answered']) {
      expect((await postEvent(baseUrl, event({ status }))).status).toBe(204);
    }
    expect(intake.statuses).toEqual([]);
    expect(intake.verdicts).toEqual([]);
  });

  it.each([
    [{ status: 'human' }, { verdict: 'human', messageEnded: false, raw: 'human' }],
    [{ status: 'machine' }, { verdict: 'machine', messageEnded: false, raw: 'machine' }],
    [
      { status: 'machine', sub_state: 'beep_start' },
      { verdict: 'machine', messageEnded: true, raw: 'beep_start' },
    ],
    [
      { status: 'machine', sub_state: 'beep_timeout' },
      { verdict: 'machine', messageEnded: true, raw: 'beep_timeout' },
    ],
  ])('reads the detection event %j', async (fields, report) => {
    const baseUrl = await start();
    const posted = event(fields);
    expect((await postEvent(baseUrl, posted)).status).toBe(204);
    expect(intake.verdicts).toEqual([
      { carrier: 'vonage', callSid: posted.uuid, report: { ...report, detectionMs: null } },
    ]);
    expect(intake.statuses).toEqual([]);
  });

  it("only logs an inbound call's events", async () => {
    const baseUrl = await start();
    expect((await postEvent(baseUrl, event({ status: 'busy' }), { query: '' })).status).toBe(204);
    expect(intake.statuses).toEqual([]);
  });

  it('refuses a forged, empty or repeated context with a 400, reporting nothing', async () => {
    const baseUrl = await start();
    for (const query of [
      '?context=c1.eyJhIjoyfQ.c2lnbmVk',
      '?context=',
      `?context=${SEALED}&context=${SEALED}`,
    ]) {
      const res = await postEvent(baseUrl, event({ status: 'busy' }), { query });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error).toEqual({
        code: 'CALLBRIDGE_BAD_REQUEST',
        message: 'the call context in this URL is not valid',
      });
    }
    expect(intake.statuses).toEqual([]);
    expect(intake.refusals.every((r) => r.reason === 'bad_context')).toBe(true);
  });

  it('refuses an event whose uuid is missing or malformed, and a body that is not a JSON object', async () => {
    const baseUrl = await start();
    for (const uuid of [undefined, '', 'has spaces', 7]) {
      const res = await postEvent(baseUrl, event({ status: 'busy', uuid }));
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.message).toBe('uuid is missing or malformed');
    }
    for (const body of ['not json', '[1]']) {
      expect((await postEvent(baseUrl, body)).status).toBe(400);
    }
    expect(intake.statuses).toEqual([]);
    expect(intake.verdicts).toEqual([]);
  });

  it('refuses an unsigned event, a forged one, and one whose body was altered', async () => {
    const baseUrl = await start();
    const posted = event({ status: 'busy' });
    expect((await postEvent(baseUrl, posted, { signing: null })).status).toBe(403);
    expect(
      (await postEvent(baseUrl, posted, { signing: { secret: 'another-secret-another-secret' } })).status,
    ).toBe(403);
    expect((await postEvent(baseUrl, posted, { signing: { ...SIGNING, hashOf: '{}' } })).status).toBe(403);
    expect(intake.statuses).toEqual([]);
  });
});
