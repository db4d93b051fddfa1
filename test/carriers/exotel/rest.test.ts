// The Exotel REST client against a fake API on an ephemeral port.
import { afterEach, describe, expect, it } from 'vitest';
import { CarrierApiError } from '../../../src/errors.js';
import { createExotelRest } from '../../../src/carriers/exotel/rest.js';
import type { FakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { startFakeExotelApi } from '../../helpers/fake-exotel-api.js';

const SID = 'acme1';
const KEY = 'exotel-api-key';
const TOKEN = 'exotel-api-token-secret-0001';
const CALL_SID = 'b6cfaf0a1b2c3d4e5f60718293a4b5c6';
const BASIC = `Basic ${Buffer.from(`${KEY}:${TOKEN}`).toString('base64')}`;

const apis: FakeCarrierApi[] = [];
afterEach(async () => {
  for (const api of apis.splice(0)) await api.close();
});

async function fakeApi(...args: Parameters<typeof startFakeExotelApi>) {
  const api = await startFakeExotelApi(...args);
  apis.push(api);
  return api;
}

const client = (apiUrl: string, timeoutMs = 2000) =>
  createExotelRest({ apiUrl, accountSid: SID, apiKey: KEY, apiToken: TOKEN, timeoutMs });

async function rejection(promise: Promise<unknown>): Promise<CarrierApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CarrierApiError);
    return err as CarrierApiError;
  }
  throw new Error('expected the call to fail');
}

const ORIGINATE = {
  to: '+919876543210',
  callerId: '08012345678',
  flowUrl: 'http://my.exotel.com/acme1/exoml/start_voice/123',
};

describe('exotel REST client', () => {
  it('places a call into the flow, form-encoded with Basic auth, asking for JSON', async () => {
    const api = await fakeApi();
    const state = await client(api.url).originate({
      ...ORIGINATE,
      customField: 'ctx-1',
      statusCallback: 'https://bridge.example.com/carriers/exotel/status',
      timeLimitS: 600,
      timeoutS: 30,
    });
    expect(state.status).toBe('in-progress');
    const [req] = api.requests;
    expect(req).toMatchObject({
      method: 'POST',
      path: `/v1/Accounts/${SID}/Calls/connect.json`,
      authorization: BASIC,
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(Object.fromEntries(new URLSearchParams(req!.body))).toEqual({
      From: '+919876543210',
      CallerId: '08012345678',
      Url: ORIGINATE.flowUrl,
      CustomField: 'ctx-1',
      StatusCallback: 'https://bridge.example.com/carriers/exotel/status',
      TimeLimit: '600',
      TimeOut: '30',
    });
  });

  it("reads a call's status", async () => {
    const api = await fakeApi();
    const exotel = client(api.url);
    expect(await exotel.status(CALL_SID)).toEqual({
      callSid: CALL_SID,
      status: 'completed',
      carrierStatus: 'completed',
    });
    expect(api.requests[0]).toMatchObject({
      method: 'GET',
      path: `/v1/Accounts/${SID}/Calls/${CALL_SID}.json`,
    });
    for (const word of ['queued', 'ringing', 'in-progress', 'busy', 'no-answer', 'failed', 'canceled']) {
      api.respond(() => ({ status: 200, body: { Call: { Sid: CALL_SID, Status: word } } }));
      expect((await exotel.status(CALL_SID)).status).toBe(word);
    }
    api.respond(() => ({ status: 200, body: { Call: { Sid: CALL_SID, Status: 'odd<word>' } } }));
    expect(await exotel.status(CALL_SID)).toMatchObject({ status: 'unknown', carrierStatus: 'unknown' });
  });

  it('types refusals with retryable, naming only the Exotel code', async () => {
    const api = await fakeApi(() => ({
      status: 400,
      body: { RestException: { Status: 400, Code: 34010, Message: 'number +919876543210 is invalid' } },
    }));
    const bad = await rejection(client(api.url).originate(ORIGINATE));
    expect(bad).toMatchObject({ status: 400, retryable: false, carrierCode: '34010', carrier: 'exotel' });
    expect(bad.message).not.toContain('9876543210');
    api.respond(() => ({ status: 502 }));
    expect(await rejection(client(api.url).status(CALL_SID))).toMatchObject({ status: 502, retryable: true });
    api.respond(() => ({ status: 429 }));
    expect(await rejection(client(api.url).status(CALL_SID))).toMatchObject({ status: 429, retryable: true });
    api.respond(() => ({ status: 404, body: { RestException: { Code: 20404 } } }));
    expect(await rejection(client(api.url).status(CALL_SID))).toMatchObject({
      status: 404,
      retryable: false,
    });
  });

  it('refuses a create answered without a Sid as not retryable (the call may exist)', async () => {
    const api = await fakeApi(() => ({ status: 200, body: { Call: { Status: 'queued' } } }));
    expect((await rejection(client(api.url).originate(ORIGINATE))).retryable).toBe(false);
    api.respond(() => ({ status: 200, body: '<xml/>' }));
    expect((await rejection(client(api.url).originate(ORIGINATE))).retryable).toBe(false);
  });

  it('times out, and reports network errors as retryable, never with the token', async () => {
    const api = await fakeApi(() => 'hang');
    const timedOut = await rejection(client(api.url, 100).status(CALL_SID));
    expect(timedOut).toMatchObject({ retryable: true, status: undefined });
    expect(timedOut.message).toMatch(/timed out after 100 ms/);
    const down = await rejection(client('http://127.0.0.1:1').originate(ORIGINATE));
    expect(down.retryable).toBe(true);
    for (const err of [timedOut, down]) {
      expect(err.message).not.toContain(TOKEN);
      expect(JSON.stringify(err)).not.toContain(TOKEN);
    }
  });
});
