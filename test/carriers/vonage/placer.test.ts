// Placing calls through Vonage against a fake of its Voice API scripted by each test: the create
// request's fields (our answer and event URLs carrying the sealed context, advanced machine
// detection with the beep), caller ID defaults, errors classified retryable or not, status and
// hang-up.
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterEach, describe, expect, it } from 'vitest';
import { createAppTokenSource } from '../../../src/carriers/vonage/app-token.js';
import { createVonagePlacer } from '../../../src/carriers/vonage/placer.js';
import { createVonageRest } from '../../../src/carriers/vonage/rest.js';
import { CarrierApiError } from '../../../src/errors.js';
import type { FakeApiResponder, FakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { startFakeVonageApi, vonageDefaults } from '../../helpers/fake-vonage-api.js';

const APP_ID = '11111111-2222-4333-8444-555555555555';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const CONTEXT = 'c1.eyJhIjoxfQ.c2lnbmVk';
let api: FakeCarrierApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function placer(
  responder: FakeApiResponder = vonageDefaults,
  defaultFrom: string | null = '+447700900000',
) {
  api = await startFakeVonageApi(responder);
  const rest = createVonageRest({
    apiUrl: api.url,
    token: createAppTokenSource({ applicationId: APP_ID, privateKey: PRIVATE_PEM }),
    timeoutMs: 2000,
  });
  return createVonagePlacer({ rest, publicUrl: () => 'https://bridge.example.com/', defaultFrom });
}

const request = { to: '+447700900150', from: null, context: CONTEXT, detectMachine: true };

describe('the Vonage call placer', () => {
  it('creates the call with our URLs carrying the context and beep detection, and returns its uuid', async () => {
    const vonage = await placer();
    const { callSid } = await vonage.place(request);
    const [create] = api!.requests;
    expect(create).toMatchObject({ method: 'POST', path: '/v1/calls' });
    expect(JSON.parse(create!.body)).toEqual({
      to: [{ type: 'phone', number: '447700900150' }],
      from: { type: 'phone', number: '447700900000' },
      answer_url: [`https://bridge.example.com/carriers/vonage/answer?direction=outbound&context=${CONTEXT}`],
      answer_method: 'GET',
      event_url: [`https://bridge.example.com/carriers/vonage/events?context=${CONTEXT}`],
      event_method: 'POST',
      ringing_timer: 30,
      advanced_machine_detection: { behavior: 'continue', mode: 'detect_beep', beep_timeout: 45 },
    });
    expect(callSid).toMatch(/^[0-9a-f-]{36}$/);
    const claims = jwt.verify(create!.authorization!.slice(7), publicKey, { algorithms: ['RS256'] });
    expect(claims).toMatchObject({ application_id: APP_ID });
  });

  it('asks for no detection when none is wanted, and uses the caller ID given', async () => {
    const vonage = await placer();
    await vonage.place({ ...request, from: '+12125550199', detectMachine: false });
    const body = JSON.parse(api!.requests[0]!.body) as Record<string, unknown>;
    expect(body.from).toEqual({ type: 'phone', number: '12125550199' });
    expect(body.advanced_machine_detection).toBeUndefined();
  });

  it('refuses a call with no caller ID, or a number Vonage cannot take, as not retryable, asking nothing', async () => {
    const none = await placer(vonageDefaults, null);
    await expect(none.place(request)).rejects.toMatchObject({ carrier: 'vonage', retryable: false });
    const bad = await none.place({ ...request, from: 'not-a-number' }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(CarrierApiError);
    expect(bad).toMatchObject({ retryable: false });
    expect(api!.requests).toEqual([]);
  });

  it.each([
    [500, true],
    [429, true],
    [400, false],
    [401, false],
  ])('classifies HTTP %i from the create request as retryable: %s', async (status, retryable) => {
    const vonage = await placer(() => ({
      status,
      body: {
        type: 'https://developer.nexmo.com/api-errors#validation',
        title: 'Bad',
        detail: '447700900150',
      },
    }));
    const err = (await vonage.place(request).catch((e: unknown) => e)) as CarrierApiError;
    expect(err).toMatchObject({ retryable, status });
    expect(err.message).not.toContain('447700900150');
  });

  it('takes a create answer without a uuid as not retryable (the call may exist)', async () => {
    const vonage = await placer(() => ({ status: 201, body: { status: 'started' } }));
    await expect(vonage.place(request)).rejects.toMatchObject({ retryable: false });
  });

  it('reads a call in the common words, and hangs up tolerating a call Vonage no longer has', async () => {
    const vonage = await placer((req) =>
      req.method === 'GET'
        ? { status: 200, body: { uuid: 'u-1', status: 'timeout' } }
        : { status: 404, body: { type: 'https://developer.nexmo.com/api-errors#not-found' } },
    );
    expect(await vonage.status('u-1')).toEqual({
      callSid: 'u-1',
      status: 'no-answer',
      carrierStatus: 'timeout',
    });
    await vonage.hangup('u-1');
    expect(JSON.parse(api!.requests[1]!.body)).toEqual({ action: 'hangup' });
  });
});
