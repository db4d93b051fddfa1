// Vonage's webhook routes on a real Fastify app with a fake intake. Signed requests are made with
// the `jsonwebtoken` package (test/helpers/vonage-carrier.ts), independently of the project's code.
import { afterEach, describe, expect, it } from 'vitest';
import { vonageRoutes } from '../../../src/carriers/vonage/routes.js';
import { readNcco } from '../../../src/sim/carrier/dialects/vonage.js';
import { type CarrierApp, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake, INSTANCE } from '../../helpers/fake-intake.js';
import {
  announceVonageCall,
  newVonageUuid,
  postVonageEvent,
  vonageWebhookJwt,
} from '../../helpers/vonage-carrier.js';

const SECRET = 'vonage-signature-secret-for-tests-0001';
const APP_ID = '11111111-2222-4333-8444-555555555555';
const API_KEY = 'abcd1234';
const SIGNING = { secret: SECRET, applicationId: APP_ID, apiKey: API_KEY };

let server: CarrierApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  opts: { secrets?: string[]; refuseUnverified?: boolean } = {},
): Promise<{ intake: FakeIntake; baseUrl: string }> {
  const intake = createFakeIntake();
  server = await startCarrierApp(
    vonageRoutes({
      intake,
      signatureSecrets: opts.secrets ?? [SECRET],
      applicationId: APP_ID,
      apiKey: API_KEY,
      refuseUnverified: opts.refuseUnverified ?? false,
    }),
  );
  return { intake, baseUrl: server.baseUrl };
}

describe('vonage answer webhook', () => {
  it('answers a signed GET with the NCCO connecting the call to its media URL', async () => {
    const { intake, baseUrl } = await start();
    const uuid = newVonageUuid();
    const answer = await announceVonageCall(
      baseUrl,
      { uuid, from: '447700900000', to: '447700900001' },
      { signing: SIGNING },
    );
    expect(answer.status).toBe(200);
    expect(answer.contentType).toMatch(/^application\/json/);
    const [prepared] = intake.prepared;
    expect(answer.ncco).toEqual([
      {
        action: 'connect',
        endpoint: [
          {
            type: 'websocket',
            uri: `wss://bridge.example.com/media/vonage/${INSTANCE}/${prepared!.token}`,
            'content-type': 'audio/l16;rate=16000',
            headers: { call_uuid: uuid, token: prepared!.token },
          },
        ],
      },
    ]);
    expect(answer.observer).toBe(prepared!.observerToken);
    expect(intake.announced).toEqual([
      {
        carrier: 'vonage',
        callSid: uuid,
        from: '+447700900000',
        to: '+447700900001',
        direction: 'inbound',
        mediaFormat: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
        verified: true,
      },
    ]);
    expect(intake.refusals).toEqual([]);
  });

  it('answers a signed POST with a JSON body the same way', async () => {
    const { intake, baseUrl } = await start();
    const uuid = newVonageUuid();
    const answer = await announceVonageCall(baseUrl, { uuid }, { signing: SIGNING, method: 'POST' });
    expect(answer.status).toBe(200);
    expect(answer.endpoint?.headers).toEqual({ call_uuid: uuid, token: intake.prepared[0]!.token });
  });

  it('marks our own outbound calls and carries their context', async () => {
    const { intake, baseUrl } = await start();
    intake.outboundContext = async (_carrier, ref, verified) =>
      verified && typeof ref === 'string'
        ? {
            ref,
            context: {
              attemptId: null,
              campaignId: 'campaign-7',
              contact: 9,
              profile: 'default',
              variables: {},
              amd: null,
            },
          }
        : null;
    const answer = await announceVonageCall(
      baseUrl,
      { uuid: newVonageUuid() },
      { signing: SIGNING, query: { direction: 'outbound', context: 'campaign-7:contact-9' } },
    );
    expect(answer.status).toBe(200);
    expect(intake.announced[0]).toMatchObject({
      direction: 'outbound',
      context: { ref: 'campaign-7:contact-9' },
    });
  });

  it('declines politely when the intake does not admit the call, dialing no agent', async () => {
    const { intake, baseUrl } = await start();
    intake.admission = 'at_capacity';
    const answer = await announceVonageCall(baseUrl, { uuid: newVonageUuid() }, { signing: SIGNING });
    expect(answer.status).toBe(200);
    expect(answer.ncco).toEqual([{ action: 'talk', text: intake.decline.message }]);
    expect(intake.prepared).toHaveLength(0);
  });

  it('streams the rendered decline when there is one', async () => {
    const { intake, baseUrl } = await start();
    intake.admission = 'draining';
    intake.decline.audioUrl = 'https://bridge.example.com/prompts/at_capacity.wav';
    const answer = await announceVonageCall(baseUrl, { uuid: newVonageUuid() }, { signing: SIGNING });
    expect(answer.ncco).toEqual([
      { action: 'stream', streamUrl: ['https://bridge.example.com/prompts/at_capacity.wav'] },
    ]);
    expect(readNcco(JSON.stringify(answer.ncco))).toEqual({
      kind: 'declined',
      say: '(the recording at https://bridge.example.com/prompts/at_capacity.wav)',
    });
  });

  const refusals: Array<[string, (body: string) => Parameters<typeof announceVonageCall>[2], string]> = [
    ['unsigned', () => ({}), 'signature_missing'],
    [
      'forged',
      () => ({ signing: { ...SIGNING, secret: 'forged-secret-forged-secret-0000' } }),
      'signature_bad_signature',
    ],
    [
      'expired (a replay of an old request)',
      () => ({ signing: { ...SIGNING, iatOffsetS: -301 } }),
      'signature_expired',
    ],
    [
      'signed over another body',
      () => ({ signing: { ...SIGNING, hashOf: '{"uuid":"other"}' } }),
      'signature_payload_mismatch',
    ],
    [
      'for another application',
      () => ({ signing: { ...SIGNING, applicationId: '99999999-2222-4333-8444-555555555555' } }),
      'signature_wrong_application',
    ],
    ['with a garbage bearer', () => ({ authorization: 'Bearer x.y.z' }), 'signature_malformed'],
  ];
  for (const [name, opts, reason] of refusals) {
    it(`refuses a request ${name}, preparing no call`, async () => {
      const { intake, baseUrl } = await start();
      const answer = await announceVonageCall(baseUrl, { uuid: newVonageUuid() }, opts(''));
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'CALLBRIDGE_BAD_SIGNATURE', message: expect.any(String) },
      });
      expect(intake.prepared).toHaveLength(0);
      expect(intake.refusals).toEqual([{ carrier: 'vonage', reason }]);
    });
  }

  it('refuses the same signed request presented twice (its jti is a nonce)', async () => {
    const { intake, baseUrl } = await start();
    const uuid = newVonageUuid();
    const authorization = `Bearer ${vonageWebhookJwt('', SIGNING)}`;
    expect((await announceVonageCall(baseUrl, { uuid }, { authorization })).status).toBe(200);
    const replay = await announceVonageCall(baseUrl, { uuid }, { authorization });
    expect(replay.status).toBe(403);
    expect(intake.prepared).toHaveLength(1);
    expect(intake.refusals).toEqual([{ carrier: 'vonage', reason: 'signature_replayed' }]);
  });

  it("records nonces through the store's claimOnce when given one", async () => {
    const intake = createFakeIntake();
    const claimed: Array<[string, number]> = [];
    server = await startCarrierApp(
      vonageRoutes({
        intake,
        signatureSecrets: [SECRET],
        applicationId: APP_ID,
        apiKey: API_KEY,
        refuseUnverified: false,
        claimOnce: async (key, ttlMs) => {
          claimed.push([key, ttlMs]);
          return claimed.length === 1;
        },
      }),
    );
    expect(
      (await announceVonageCall(server.baseUrl, { uuid: newVonageUuid() }, { signing: SIGNING })).status,
    ).toBe(200);
    expect(
      (await announceVonageCall(server.baseUrl, { uuid: newVonageUuid() }, { signing: SIGNING })).status,
    ).toBe(403);
    expect(claimed).toEqual([
      [expect.stringMatching(/^vonage-jwt:[0-9a-f-]{36}$/), 600_000],
      [expect.stringMatching(/^vonage-jwt:/), 600_000],
    ]);
  });

  it('refuses a POST whose body was changed after signing', async () => {
    const { intake, baseUrl } = await start();
    const uuid = newVonageUuid();
    const signedBody = JSON.stringify({ uuid, from: '447700900000', to: '447700900001' });
    const res = await fetch(`${baseUrl}/carriers/vonage/answer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${vonageWebhookJwt(signedBody, SIGNING)}`,
      },
      body: signedBody.replace('447700900001', '449999999999'),
    });
    expect(res.status).toBe(403);
    expect(intake.prepared).toHaveLength(0);
  });

  it('accepts unsigned requests when no secret is set, outside production', async () => {
    const { intake, baseUrl } = await start({ secrets: [] });
    expect((await announceVonageCall(baseUrl, { uuid: newVonageUuid() })).status).toBe(200);
    expect(intake.prepared).toHaveLength(1);
  });

  it('refuses every request when no secret is set in production', async () => {
    const { intake, baseUrl } = await start({ secrets: [], refuseUnverified: true });
    const answer = await announceVonageCall(baseUrl, { uuid: newVonageUuid() });
    expect(answer.status).toBe(403);
    expect(intake.refusals).toEqual([{ carrier: 'vonage', reason: 'unverified' }]);
    expect((await postVonageEvent(baseUrl, { uuid: newVonageUuid(), status: 'completed' })).status).toBe(403);
  });

  const malformed: Array<[string, Record<string, string>]> = [
    ['no uuid', { uuid: '' }],
    ['a uuid with odd characters', { uuid: '../../x' }],
    ['a uuid too long', { uuid: 'a'.repeat(65) }],
  ];
  for (const [name, params] of malformed) {
    it(`answers a signed request with ${name} with the project's 400`, async () => {
      const { intake, baseUrl } = await start();
      const answer = await announceVonageCall(baseUrl, params as { uuid: string }, { signing: SIGNING });
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'CALLBRIDGE_BAD_REQUEST', message: expect.any(String) },
      });
      expect(answer.body).not.toContain('../../x');
      expect(intake.refusals).toEqual([{ carrier: 'vonage', reason: 'malformed' }]);
    });
  }

  it('answers a repeated uuid parameter with a 400, not a crash', async () => {
    const { baseUrl } = await start({ secrets: [] });
    const res = await fetch(`${baseUrl}/carriers/vonage/answer?uuid=a&uuid=b`);
    expect(res.status).toBe(400);
  });

  for (const [name, body] of [
    ['not JSON', '{"uuid":'],
    ['a JSON array', '[1]'],
    ['a JSON string', '"x"'],
    ['empty', ''],
  ] as const) {
    it(`answers a signed POST whose body is ${name} with the project's 400`, async () => {
      const { intake, baseUrl } = await start();
      const res = await fetch(`${baseUrl}/carriers/vonage/answer`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${vonageWebhookJwt(body, SIGNING)}`,
        },
        body,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
      expect(intake.prepared).toHaveLength(0);
    });
  }

  it('refuses a body over the limit with the project error', async () => {
    const { baseUrl } = await start();
    const body = JSON.stringify({ uuid: newVonageUuid(), pad: 'x'.repeat(70 * 1024) });
    const res = await fetch(`${baseUrl}/carriers/vonage/answer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${vonageWebhookJwt(body, SIGNING)}`,
      },
      body,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BODY_TOO_LARGE');
  });
});

describe('vonage event webhook', () => {
  it('takes a signed status event with 204', async () => {
    const { intake, baseUrl } = await start();
    const res = await postVonageEvent(
      baseUrl,
      { uuid: newVonageUuid(), status: 'answered', direction: 'inbound' },
      { signing: SIGNING },
    );
    expect(res.status).toBe(204);
    expect(intake.refusals).toEqual([]);
  });

  it('takes events it does not know, and answering-machine verdicts, with 204', async () => {
    const { baseUrl } = await start();
    for (const event of [
      { type: 'transfer', foo: [1] },
      { uuid: newVonageUuid(), status: 'machine', sub_state: 'beep_start' },
      {},
    ]) {
      expect((await postVonageEvent(baseUrl, event, { signing: SIGNING })).status).toBe(204);
    }
  });

  it('refuses unsigned, forged and expired events', async () => {
    const { baseUrl } = await start();
    const event = { uuid: newVonageUuid(), status: 'completed' };
    expect((await postVonageEvent(baseUrl, event)).status).toBe(403);
    expect(
      (await postVonageEvent(baseUrl, event, { signing: { ...SIGNING, secret: 'nope-nope-nope-nope' } }))
        .status,
    ).toBe(403);
    expect(
      (await postVonageEvent(baseUrl, event, { signing: { ...SIGNING, iatOffsetS: -600 } })).status,
    ).toBe(403);
  });

  it('answers a malformed signed event with the project 400', async () => {
    const { baseUrl } = await start();
    const res = await postVonageEvent(baseUrl, 'not json', { signing: SIGNING });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_REQUEST', message: expect.any(String) },
    });
  });
});
