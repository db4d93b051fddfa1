// Exotel's routes on a real Fastify app with a fake intake, requests made as the Voicebot applet
// makes them (test/helpers/exotel-carrier.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CarrierCallState } from '../../../src/carriers/call-status.js';
import type { OutboundContext } from '../../../src/call/outbound/outbound-context.js';
import { exotelRoutes } from '../../../src/carriers/exotel/routes.js';
import { networkMatcher } from '../../../src/carriers/exotel/networks.js';
import { upgradeCredentials } from '../../../src/carriers/exotel/upgrade-auth.js';
import { type CarrierApp, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake, INSTANCE } from '../../helpers/fake-intake.js';
import {
  exotelTarget,
  newExotelSid,
  postExotelStatus,
  requestExotelStream,
} from '../../helpers/exotel-carrier.js';

const SECRET = 'stream-token-secret-of-the-exotel-routes-test';
const credentialsFor = (token: string) => upgradeCredentials(SECRET, token);

let server: CarrierApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A context reference as the fake intake resolves it: `r1.good…` is ours, any other `r1.` is forged. */
const SEALED = 'r1.good.signature';
const CONTEXT: OutboundContext = {
  attemptId: 'cmp_1.1.1',
  campaignId: 'cmp_1',
  contact: 1,
  profile: 'default',
  variables: {},
  amd: null,
};

/** The placer as the routes see it: the contexts of calls placed here, and the API's word on a call. */
function fakePlacer(kept: Record<string, string>, api: (callSid: string) => Promise<CarrierCallState>) {
  const asked: string[] = [];
  return {
    asked,
    contextOf: (callSid: string) => kept[callSid] ?? null,
    status: (callSid: string) => {
      asked.push(callSid);
      return api(callSid);
    },
  };
}

/**
 * Exotel's routes; by default the test's own address (loopback) is Exotel's allowed network, so its
 * requests are verified. `networks: null` leaves EXOTEL_ALLOWED_CIDRS unset.
 */
async function start(
  opts: {
    networks?: string[] | null;
    refuseUnverified?: boolean;
    placer?: ReturnType<typeof fakePlacer>;
  } = {},
): Promise<{ intake: FakeIntake; baseUrl: string }> {
  const intake = createFakeIntake();
  intake.outboundContext = async (_carrier, ref, verified) =>
    verified && typeof ref === 'string' && ref.startsWith('r1.good') ? { ref, context: CONTEXT } : null;
  const networks = opts.networks === undefined ? ['127.0.0.1/32'] : opts.networks;
  server = await startCarrierApp(
    exotelRoutes({
      intake,
      credentialsFor,
      fromAllowedNetwork: networks === null ? null : networkMatcher(networks),
      refuseUnverified: opts.refuseUnverified ?? false,
      placer: opts.placer ?? null,
    }),
  );
  return { intake, baseUrl: server.baseUrl };
}

/** The confirmation the status route asked for has been answered and acted on. */
async function confirmed(placer: ReturnType<typeof fakePlacer>, count = 1): Promise<void> {
  await vi.waitFor(() => expect(placer.asked).toHaveLength(count));
  await new Promise((resolve) => setImmediate(resolve));
}

describe('exotel stream URL', () => {
  it('answers with the wss URL naming the token, Basic auth in it and the sample rate', async () => {
    const { intake, baseUrl } = await start();
    const callSid = newExotelSid();
    const answer = await requestExotelStream(baseUrl, { CallSid: callSid });
    expect(answer.status).toBe(200);
    const [prepared] = intake.prepared;
    const url = new URL(answer.url!);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(
      `wss://bridge.example.com/media/exotel/${INSTANCE}/${prepared!.token}`,
    );
    expect(url.searchParams.get('sample-rate')).toBe('8000');
    // The call's own credentials, derived from its single-use token: no account secret in them.
    expect(decodeURIComponent(url.username)).toBe('exotel');
    expect(decodeURIComponent(url.password)).toBe(credentialsFor(prepared!.token).password);
    expect(answer.observer).toBe(prepared!.observerToken);
    expect(intake.announced).toEqual([
      {
        carrier: 'exotel',
        callSid,
        // As Exotel writes them, then in E.164 for number routing.
        from: '+919876543210',
        to: '+918012345678',
        direction: 'inbound',
        mediaFormat: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
        verified: true,
      },
    ]);
  });

  it('hands out a URL Exotel dials back to the same path, with the Basic auth header', async () => {
    const { baseUrl, intake } = await start();
    const answer = await requestExotelStream(baseUrl, { CallSid: newExotelSid() });
    const target = exotelTarget(answer.url!, 'http://127.0.0.1:9');
    expect(target.url).toBe(
      `ws://127.0.0.1:9/media/exotel/${INSTANCE}/${intake.prepared[0]!.token}?sample-rate=8000`,
    );
    const { password } = credentialsFor(intake.prepared[0]!.token);
    expect(target.headers.authorization).toBe(
      `Basic ${Buffer.from(`exotel:${password}`).toString('base64')}`,
    );
    expect(target.sampleRate).toBe(8000);
  });

  it('gives every call credentials of its own', async () => {
    const { baseUrl } = await start();
    const first = new URL((await requestExotelStream(baseUrl, { CallSid: newExotelSid() })).url!);
    const second = new URL((await requestExotelStream(baseUrl, { CallSid: newExotelSid() })).url!);
    expect(first.password).not.toBe('');
    expect(first.password).not.toBe(second.password);
  });

  it('reads an outbound call and its context from CustomField, the number called as `to`', async () => {
    const { intake, baseUrl } = await start();
    const answer = await requestExotelStream(baseUrl, {
      CallSid: newExotelSid(),
      Direction: 'outbound-api',
      CustomField: SEALED,
    });
    expect(answer.status).toBe(200);
    expect(intake.announced[0]).toMatchObject({
      direction: 'outbound',
      context: { ref: SEALED },
      from: '+918012345678',
      to: '+919876543210',
    });
  });

  it('finds the context of a call placed here when Exotel passes no CustomField', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({ [callSid]: SEALED }, () => Promise.reject(new Error('not asked')));
    const { intake, baseUrl } = await start({ placer });
    expect((await requestExotelStream(baseUrl, { CallSid: callSid, Direction: '' })).status).toBe(200);
    expect(intake.announced[0]).toMatchObject({ direction: 'outbound', context: { ref: SEALED } });
  });

  it('refuses a CustomField that claims to be a context of ours and is not, preparing nothing', async () => {
    const { intake, baseUrl } = await start();
    const answer = await requestExotelStream(baseUrl, {
      CallSid: newExotelSid(),
      Direction: 'outbound-api',
      CustomField: 'r1.forged.signature',
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error).toEqual({
      code: 'CALLBRIDGE_BAD_REQUEST',
      message: 'the call context in CustomField is not valid',
    });
    expect(intake.prepared).toEqual([]);
    expect(intake.refusals).toEqual([{ carrier: 'exotel', reason: 'bad_context' }]);
  });

  it('ignores CustomField on an inbound call', async () => {
    const { intake, baseUrl } = await start();
    await requestExotelStream(baseUrl, { CallSid: newExotelSid(), CustomField: 'ctx-9' });
    expect(intake.announced[0]).not.toHaveProperty('context');
  });

  it('declines with the project 503 when the intake does not admit the call', async () => {
    const { intake, baseUrl } = await start();
    intake.admission = 'draining';
    const answer = await requestExotelStream(baseUrl, { CallSid: newExotelSid() });
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'CALLBRIDGE_UNAVAILABLE', message: expect.any(String) },
    });
    expect(intake.prepared).toHaveLength(0);
  });

  for (const [name, params] of [
    ['no CallSid', {}],
    ['an empty CallSid', { CallSid: '' }],
    ['a CallSid with odd characters', { CallSid: '<x>' }],
    ['a CallSid too long', { CallSid: 'a'.repeat(65) }],
  ] as const) {
    it(`refuses ${name} with the project 400, preparing no call`, async () => {
      const { intake, baseUrl } = await start();
      const answer = await requestExotelStream(baseUrl, params);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'CALLBRIDGE_BAD_REQUEST', message: expect.any(String) },
      });
      expect(answer.body).not.toContain('<x>');
      expect(intake.prepared).toHaveLength(0);
      expect(intake.refusals).toEqual([{ carrier: 'exotel', reason: 'malformed' }]);
    });
  }

  it('refuses a repeated CallSid', async () => {
    const { baseUrl } = await start();
    const res = await fetch(`${baseUrl}/carriers/exotel/stream?CallSid=a&CallSid=b`);
    expect(res.status).toBe(400);
  });

  it('refuses every request while EXOTEL_ALLOWED_CIDRS is unset in production', async () => {
    const { intake, baseUrl } = await start({ networks: null, refuseUnverified: true });
    expect((await requestExotelStream(baseUrl, { CallSid: newExotelSid() })).status).toBe(403);
    expect((await postExotelStatus(baseUrl, { CallSid: newExotelSid(), Status: 'completed' })).status).toBe(
      403,
    );
    expect(intake.prepared).toHaveLength(0);
    expect(intake.refusals.map((r) => r.reason)).toEqual(['unverified', 'unverified']);
  });

  it('refuses a request from outside EXOTEL_ALLOWED_CIDRS, preparing nothing', async () => {
    const { intake, baseUrl } = await start({ networks: ['10.0.0.0/8', '2001:db8::/32'] });
    const answer = await requestExotelStream(baseUrl, { CallSid: newExotelSid() });
    expect(answer.status).toBe(403);
    expect(answer.observer).toBeNull();
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_SIGNATURE');
    expect(intake.prepared).toHaveLength(0);
    expect(intake.refusals).toEqual([{ carrier: 'exotel', reason: 'network' }]);
  });

  it('answers an unverified request (no networks set, outside production) as unverified: no observer token', async () => {
    const { intake, baseUrl } = await start({ networks: null });
    const answer = await requestExotelStream(baseUrl, { CallSid: newExotelSid() });
    expect(answer.status).toBe(200);
    expect(intake.announced[0]).toMatchObject({ verified: false });
    expect(answer.observer).toBeNull();
    // Its stream still needs the call's own credentials.
    expect(new URL(answer.url!).password).toBe(credentialsFor(intake.prepared[0]!.token).password);
  });

  it('reads no context for an unverified request: a CustomField that claims one is refused', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({ [callSid]: SEALED }, () => Promise.reject(new Error('not asked')));
    const { intake, baseUrl } = await start({ networks: null, placer });
    const claimed = await requestExotelStream(baseUrl, { CallSid: newExotelSid(), CustomField: SEALED });
    expect(claimed.status).toBe(400);
    // A call placed here, named by an unverified request, is answered as an inbound call.
    expect((await requestExotelStream(baseUrl, { CallSid: callSid, Direction: '' })).status).toBe(200);
    expect(intake.announced).toEqual([expect.objectContaining({ direction: 'inbound', verified: false })]);
    expect(intake.announced[0]).not.toHaveProperty('context');
  });
});

describe('exotel status callback', () => {
  it('takes a form post with 204', async () => {
    const { baseUrl } = await start();
    expect((await postExotelStatus(baseUrl, { CallSid: newExotelSid(), Status: 'completed' })).status).toBe(
      204,
    );
  });

  it('takes a JSON post and unknown fields with 204', async () => {
    const { baseUrl } = await start();
    const body = JSON.stringify({ CallSid: newExotelSid(), Status: 'busy', Legs: [{ x: 1 }] });
    expect((await postExotelStatus(baseUrl, body, 'application/json')).status).toBe(204);
  });

  it('answers malformed JSON with the project 400', async () => {
    const { intake, baseUrl } = await start();
    const res = await postExotelStatus(baseUrl, '{"CallSid":', 'application/json');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_REQUEST', message: expect.any(String) },
    });
    expect(intake.refusals).toEqual([{ carrier: 'exotel', reason: 'malformed' }]);
  });

  it('answers another content type, or no body, with the project 400, counted', async () => {
    const { intake, baseUrl } = await start();
    expect((await postExotelStatus(baseUrl, '<xml/>', 'text/xml')).status).toBe(400);
    const res = await fetch(`${baseUrl}/carriers/exotel/status`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    expect(intake.refusals).toEqual([
      { carrier: 'exotel', reason: 'malformed' },
      { carrier: 'exotel', reason: 'malformed' },
    ]);
  });

  it('answers a JSON array with the project 400', async () => {
    const { baseUrl } = await start();
    expect((await postExotelStatus(baseUrl, '[1,2]', 'application/json')).status).toBe(400);
  });

  it('refuses a body over the limit with the project 413', async () => {
    const { baseUrl } = await start();
    const res = await postExotelStatus(baseUrl, { CallSid: 'x', pad: 'x'.repeat(70 * 1024) });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body).error.code).toBe('CALLBRIDGE_BODY_TOO_LARGE');
  });
});

describe('exotel status callback of an outbound call', () => {
  const state = (callSid: string, status: CarrierCallState['status'], word: string = status) => ({
    callSid,
    status,
    carrierStatus: word,
  });

  it('reports a final status once the API confirms the call ended so, with the API word', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({ [callSid]: SEALED }, async () => state(callSid, 'busy'));
    const { intake, baseUrl } = await start({ placer });
    const res = await postExotelStatus(baseUrl, {
      CallSid: callSid,
      Status: 'busy',
      ConversationDuration: '0',
    });
    expect(res.status).toBe(204);
    await confirmed(placer);
    expect(intake.statuses).toEqual([
      expect.objectContaining({
        carrier: 'exotel',
        callSid,
        context: CONTEXT,
        status: 'busy',
        reason: 'exotel status busy',
        durationMs: null,
      }),
    ]);
  });

  it('trusts the API over the callback: a forged `busy` for a call the API says is completed', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({}, async () => state(callSid, 'completed'));
    const { intake, baseUrl } = await start({ placer });
    await postExotelStatus(baseUrl, {
      CallSid: callSid,
      Status: 'busy',
      CustomField: SEALED,
      ConversationDuration: '42',
    });
    await confirmed(placer);
    expect(intake.statuses).toEqual([
      expect.objectContaining({ status: 'completed', reason: null, durationMs: 42_000 }),
    ]);
  });

  it('reports nothing while the API says the call goes on, or when the API cannot be asked', async () => {
    const live = newExotelSid();
    const unknown = newExotelSid();
    const placer = fakePlacer({ [live]: SEALED, [unknown]: SEALED }, async (callSid) => {
      if (callSid === live) return state(callSid, 'in-progress');
      throw new Error('exotel read call: HTTP 503');
    });
    const { intake, baseUrl } = await start({ placer });
    expect((await postExotelStatus(baseUrl, { CallSid: live, Status: 'completed' })).status).toBe(204);
    expect((await postExotelStatus(baseUrl, { CallSid: unknown, Status: 'failed' })).status).toBe(204);
    await confirmed(placer, 2);
    expect(intake.statuses).toEqual([]);
  });

  it('asks nothing for a status that is not final, or for a call that is not ours', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({ [callSid]: SEALED }, async () => state(callSid, 'busy'));
    const { intake, baseUrl } = await start({ placer });
    expect((await postExotelStatus(baseUrl, { CallSid: callSid, Status: 'ringing' })).status).toBe(204);
    expect((await postExotelStatus(baseUrl, { CallSid: newExotelSid(), Status: 'busy' })).status).toBe(204);
    // A third, final one for our call: only it is asked about.
    expect((await postExotelStatus(baseUrl, { CallSid: callSid, Status: 'busy' })).status).toBe(204);
    await confirmed(placer);
    expect(placer.asked).toEqual([callSid]);
    expect(intake.statuses).toHaveLength(1);
  });

  it('costs no API read when the callback is unverified', async () => {
    const callSid = newExotelSid();
    const placer = fakePlacer({ [callSid]: SEALED }, async () => state(callSid, 'busy'));
    const { intake, baseUrl } = await start({ networks: null, placer });
    expect((await postExotelStatus(baseUrl, { CallSid: callSid, Status: 'busy' })).status).toBe(204);
    // The same callback from Exotel's network is read back: the unverified one was not.
    await server!.close();
    const verified = await start({ placer });
    expect((await postExotelStatus(verified.baseUrl, { CallSid: callSid, Status: 'busy' })).status).toBe(204);
    await confirmed(placer);
    expect(placer.asked).toEqual([callSid]);
    expect(intake.statuses).toEqual([]);
    expect(verified.intake.statuses).toHaveLength(1);
  });

  it.each([
    ['no CallSid', { Status: 'busy' }, 'malformed', /CallSid is missing or malformed/],
    ['a CallSid with odd characters', { CallSid: '<x>', Status: 'busy' }, 'malformed', /CallSid/],
    ['a forged context', { CallSid: 'abc', Status: 'busy', CustomField: 'r1.x.y' }, 'bad_context', /context/],
  ])('refuses %s with the project 400, counted', async (_, body, reason, message) => {
    const placer = fakePlacer({}, () => Promise.reject(new Error('not asked')));
    const { intake, baseUrl } = await start({ placer });
    const res = await postExotelStatus(baseUrl, body as Record<string, string>);
    expect(res.status).toBe(400);
    const { error } = JSON.parse(res.body) as { error: { code: string; message: string } };
    expect(error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    expect(error.message).toMatch(message);
    expect(intake.refusals).toEqual([{ carrier: 'exotel', reason }]);
    expect(placer.asked).toEqual([]);
  });
});
