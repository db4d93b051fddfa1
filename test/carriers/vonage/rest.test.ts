// The Vonage REST client against a fake Voice API on an ephemeral port. Application JWTs are read
// back with the `jsonwebtoken` package and the key pair's public half.
import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CarrierApiError } from '../../../src/errors.js';
import { createAppTokenSource } from '../../../src/carriers/vonage/app-token.js';
import { createVonageRest } from '../../../src/carriers/vonage/rest.js';
import type { FakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { startFakeVonageApi } from '../../helpers/fake-vonage-api.js';

const APP_ID = '11111111-2222-4333-8444-555555555555';
const UUID = '63f61863-4a51-4f6b-86e1-46edebcf9356';
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

const apis: FakeCarrierApi[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const api of apis.splice(0)) await api.close();
});

async function fakeApi(...args: Parameters<typeof startFakeVonageApi>) {
  const api = await startFakeVonageApi(...args);
  apis.push(api);
  return api;
}

function client(apiUrl: string, timeoutMs = 2000) {
  return createVonageRest({
    apiUrl,
    token: createAppTokenSource({ applicationId: APP_ID, privateKey: PRIVATE_PEM }),
    timeoutMs,
  });
}

async function rejection(promise: Promise<unknown>): Promise<CarrierApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CarrierApiError);
    return err as CarrierApiError;
  }
  throw new Error('expected the call to fail');
}

function bearerClaims(authorization: string | undefined): jwt.JwtPayload {
  expect(authorization).toMatch(/^Bearer /);
  return jwt.verify(authorization!.slice(7), PUBLIC_PEM, { algorithms: ['RS256'] }) as jwt.JwtPayload;
}

describe('vonage REST client', () => {
  it('hangs up with PUT {"action":"hangup"} and an RS256 application JWT', async () => {
    const api = await fakeApi();
    await client(api.url).hangup(UUID);
    const [req] = api.requests;
    expect(req).toMatchObject({ method: 'PUT', path: `/v1/calls/${UUID}`, contentType: 'application/json' });
    expect(JSON.parse(req!.body)).toEqual({ action: 'hangup' });
    const claims = bearerClaims(req!.authorization);
    expect(claims.application_id).toBe(APP_ID);
    expect(typeof claims.jti).toBe('string');
    expect(claims.exp! - claims.iat!).toBeGreaterThan(0);
  });

  it('transfers to a number or a SIP address with an NCCO', async () => {
    const api = await fakeApi();
    const vonage = client(api.url);
    await vonage.transfer(UUID, '+15550100');
    await vonage.transfer(UUID, 'sip:desk@example.com');
    expect(api.requests.map((r) => JSON.parse(r.body))).toEqual([
      {
        action: 'transfer',
        destination: {
          type: 'ncco',
          ncco: [{ action: 'connect', endpoint: [{ type: 'phone', number: '15550100' }] }],
        },
      },
      {
        action: 'transfer',
        destination: {
          type: 'ncco',
          ncco: [{ action: 'connect', endpoint: [{ type: 'sip', uri: 'sip:desk@example.com' }] }],
        },
      },
    ]);
  });

  it('refuses a transfer target that is neither a number nor a SIP address, before any request', async () => {
    const api = await fakeApi();
    await expect(client(api.url).transfer(UUID, 'desk')).rejects.toThrow(/E.164 number or a sip: URI/);
    expect(api.requests).toHaveLength(0);
  });

  it('treats a hang-up of a call Vonage no longer has (404) as done', async () => {
    const api = await fakeApi(() => ({
      status: 404,
      body: { type: 'https://developer.nexmo.com/api-errors#not-found' },
    }));
    await expect(client(api.url).hangup(UUID)).resolves.toBeUndefined();
  });

  it('reports a transfer of an ended call as a non-retryable error', async () => {
    const api = await fakeApi(() => ({
      status: 404,
      body: { type: 'https://developer.nexmo.com/api-errors#not-found' },
    }));
    const err = await rejection(client(api.url).transfer(UUID, '+15550100'));
    expect(err).toMatchObject({ status: 404, retryable: false, carrierCode: 'not-found', carrier: 'vonage' });
  });

  it('marks 4xx as not retryable and 5xx and 429 as retryable, naming only the error type', async () => {
    const api = await fakeApi(() => ({
      status: 400,
      body: {
        type: 'https://developer.nexmo.com/api-errors#validation',
        title: 'Bad',
        detail: 'number +15550100 is bad',
      },
    }));
    const bad = await rejection(client(api.url).hangup(UUID));
    expect(bad).toMatchObject({
      status: 400,
      retryable: false,
      carrierCode: 'validation',
      code: 'CALLBRIDGE_CARRIER_API',
    });
    expect(bad.message).not.toContain('15550100');
    api.respond(() => ({ status: 503, body: 'down' }));
    expect(await rejection(client(api.url).hangup(UUID))).toMatchObject({ status: 503, retryable: true });
    api.respond(() => ({ status: 429 }));
    expect(await rejection(client(api.url).hangup(UUID))).toMatchObject({ status: 429, retryable: true });
  });

  it('times out a request that gets no answer, as a retryable error', async () => {
    const api = await fakeApi(() => 'hang');
    const err = await rejection(client(api.url, 100).hangup(UUID));
    expect(err.retryable).toBe(true);
    expect(err.status).toBeUndefined();
    expect(err.message).toMatch(/timed out after 100 ms/);
  });

  it('times out a body that trickles in', async () => {
    const api = await fakeApi(() => ({ status: 200, body: {}, delayMs: 500 }));
    expect((await rejection(client(api.url, 100).status(UUID))).message).toMatch(/timed out/);
  });

  it('reports a network error as retryable, without the token', async () => {
    const err = await rejection(client('http://127.0.0.1:1').hangup(UUID));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('vonage hang up call: network error');
  });

  it('places an outbound call with answer and event URLs and machine detection', async () => {
    const api = await fakeApi();
    const state = await client(api.url).originate({
      to: '+447700900001',
      from: '+447700900000',
      answerUrl: 'https://bridge.example.com/carriers/vonage/answer?direction=outbound',
      eventUrl: 'https://bridge.example.com/carriers/vonage/events',
      machineDetection: { behavior: 'continue', mode: 'detect_beep', beepTimeoutS: 45 },
      ringingTimerS: 30,
    });
    expect(state).toMatchObject({ status: 'queued', carrierStatus: 'started' });
    expect(state.callSid).toMatch(/^[0-9a-f-]{36}$/);
    const [req] = api.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/calls' });
    expect(JSON.parse(req!.body)).toEqual({
      to: [{ type: 'phone', number: '447700900001' }],
      from: { type: 'phone', number: '447700900000' },
      answer_url: ['https://bridge.example.com/carriers/vonage/answer?direction=outbound'],
      answer_method: 'GET',
      event_url: ['https://bridge.example.com/carriers/vonage/events'],
      event_method: 'POST',
      ringing_timer: 30,
      advanced_machine_detection: { behavior: 'continue', mode: 'detect_beep', beep_timeout: 45 },
    });
  });

  it('refuses an answer to a create without a uuid as not retryable (the call may exist)', async () => {
    const api = await fakeApi(() => ({ status: 201, body: { status: 'started' } }));
    const err = await rejection(
      client(api.url).originate({
        to: '+15550101',
        from: '+15550100',
        answerUrl: 'https://a/',
        eventUrl: 'https://b/',
      }),
    );
    expect(err.retryable).toBe(false);
  });

  it('reads a call state in the words the dialer reads', async () => {
    const api = await fakeApi();
    const vonage = client(api.url);
    const words: Array<[string, string]> = [
      ['answered', 'in-progress'],
      ['completed', 'completed'],
      ['busy', 'busy'],
      ['timeout', 'no-answer'],
      ['unanswered', 'no-answer'],
      ['rejected', 'failed'],
      ['cancelled', 'canceled'],
      ['something-new', 'unknown'],
    ];
    for (const [vonageStatus, status] of words) {
      api.respond(() => ({ status: 200, body: { uuid: UUID, status: vonageStatus } }));
      expect(await vonage.status(UUID)).toEqual({ callSid: UUID, status, carrierStatus: vonageStatus });
    }
    expect(api.requests.every((r) => r.method === 'GET' && r.path === `/v1/calls/${UUID}`)).toBe(true);
  });
});

describe('vonage application token', () => {
  it('is reused for a short while, then minted anew', async () => {
    let now = 1_750_000_000_000;
    const source = createAppTokenSource({ applicationId: APP_ID, privateKey: PRIVATE_PEM, nowMs: () => now });
    const first = await source();
    expect(await source()).toBe(first);
    now += 59_000;
    expect(await source()).toBe(first);
    now += 2_000;
    const second = await source();
    expect(second).not.toBe(first);
    const claims = jwt.decode(second) as jwt.JwtPayload;
    expect(claims.iat).toBe(Math.floor(now / 1000));
    expect(claims.exp).toBe(claims.iat! + 300);
    expect((jwt.decode(first) as jwt.JwtPayload).jti).not.toBe(claims.jti);
  });

  it('is verified by the public key and pinned to RS256', async () => {
    const token = await createAppTokenSource({ applicationId: APP_ID, privateKey: PRIVATE_PEM })();
    expect(jwt.decode(token, { complete: true })?.header).toEqual({ alg: 'RS256', typ: 'JWT' });
    expect(() => jwt.verify(token, PUBLIC_PEM, { algorithms: ['RS256'] })).not.toThrow();
  });
});
