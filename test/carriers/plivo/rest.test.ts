import { afterEach, describe, expect, it } from 'vitest';
import { CarrierApiError } from '../../../src/errors.js';
import { createPlivoRest } from '../../../src/carriers/plivo/rest.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';

const AUTH_ID = 'MAXXXXXXXXXXXXXXXXXX';
const AUTH_TOKEN = 'plivo-secret-token-0123';
const CALL = 'c1f7e3a0-1111-2222-3333-444455556666';
const CALL_PATH = `/v1/Account/${AUTH_ID}/Call/${CALL}/`;
const BASIC = `Basic ${Buffer.from(`${AUTH_ID}:${AUTH_TOKEN}`).toString('base64')}`;

let api: FakeCarrierApi;

afterEach(async () => {
  await api?.close();
});

function client(timeoutMs = 2000) {
  return createPlivoRest({
    apiUrl: api.url,
    authId: AUTH_ID,
    authToken: AUTH_TOKEN,
    publicUrl: () => 'https://bridge.example.com',
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
  throw new Error('expected the request to fail');
}

describe('plivo REST client', () => {
  it('hangs up with DELETE and Basic auth', async () => {
    api = await startFakeCarrierApi(() => ({ status: 204 }));
    expect(await client().hangup(CALL)).toBe(true);
    expect(api.requests[0]).toMatchObject({ method: 'DELETE', path: CALL_PATH, body: '' });
    expect(api.requests[0]!.authorization).toBe(BASIC);
  });

  it('treats hanging up a call Plivo no longer has (404) as done', async () => {
    api = await startFakeCarrierApi(() => ({ status: 404, body: { api_id: 'x', error: 'call not found' } }));
    await expect(client().hangup(CALL)).resolves.toBe(false);
  });

  it('transfers the A leg to our transfer route, which will dial the target', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 202,
      body: { api_id: 'x', message: 'call transferred' },
    }));
    await client().transfer(CALL, '+15550100');
    const [req] = api.requests;
    expect(req).toMatchObject({ method: 'POST', path: CALL_PATH });
    expect(req!.contentType).toBe('application/json');
    expect(JSON.parse(req!.body)).toEqual({
      legs: 'aleg',
      aleg_url: 'https://bridge.example.com/carriers/plivo/transfer?to=%2B15550100',
      aleg_method: 'POST',
    });
  });

  it('refuses to transfer to something that cannot be dialled, before any request', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: {} }));
    await expect(client().transfer(CALL, 'https://evil.example')).rejects.toThrow(/E\.164/);
    expect(api.requests).toEqual([]);
  });

  it('does not treat a 404 on transfer as done', async () => {
    api = await startFakeCarrierApi(() => ({ status: 404, body: { error: 'call not found' } }));
    expect(await rejection(client().transfer(CALL, '+15550100'))).toMatchObject({
      status: 404,
      retryable: false,
    });
  });

  it('marks 5xx and 429 retryable, 401 not, and keeps Plivo text and the token out of messages', async () => {
    api = await startFakeCarrierApi(() => ({ status: 500, body: { error: 'oops +15550100' } }));
    const err = await rejection(client().hangup(CALL));
    expect(err).toMatchObject({
      status: 500,
      retryable: true,
      code: 'CALLBRIDGE_CARRIER_API',
      carrier: 'plivo',
    });
    expect(err.message).toBe('plivo hang up call: HTTP 500');
    api.respond(() => ({ status: 429 }));
    expect(await rejection(client().hangup(CALL))).toMatchObject({ retryable: true });
    api.respond(() => ({ status: 401, body: { error: 'authentication failed' } }));
    const denied = await rejection(client().hangup(CALL));
    expect(denied).toMatchObject({ status: 401, retryable: false });
    expect(denied.message).not.toContain(AUTH_TOKEN);
  });

  it('times out, retryably', async () => {
    api = await startFakeCarrierApi(() => 'hang' as const);
    const err = await rejection(client(100).hangup(CALL));
    expect(err).toMatchObject({ retryable: true });
    expect(err.message).toBe('plivo hang up call: timed out after 100 ms');
  });

  it('places an outbound call with machine detection', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 201,
      body: {
        api_id: 'a',
        message: 'call fired',
        request_uuid: '9834029e-58b6-11e1-b8b7-a5bd0e4e126f',
      },
    }));
    const placed = await client().originate({
      to: '+15550100',
      from: '+15550199',
      answerUrl: 'https://bridge.example.com/carriers/plivo/answer',
      hangupUrl: 'https://bridge.example.com/carriers/plivo/hangup',
      ringTimeoutSec: 30,
      machineDetection: 'true',
      machineDetectionTimeMs: 5000,
      machineDetectionUrl: 'https://bridge.example.com/carriers/plivo/machine',
    });
    expect(placed).toEqual({ requestUuid: '9834029e-58b6-11e1-b8b7-a5bd0e4e126f' });
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: `/v1/Account/${AUTH_ID}/Call/` });
    expect(JSON.parse(api.requests[0]!.body)).toEqual({
      from: '15550199',
      to: '15550100',
      answer_url: 'https://bridge.example.com/carriers/plivo/answer',
      answer_method: 'POST',
      hangup_url: 'https://bridge.example.com/carriers/plivo/hangup',
      hangup_method: 'POST',
      ring_timeout: 30,
      machine_detection: 'true',
      machine_detection_time: 5000,
      machine_detection_url: 'https://bridge.example.com/carriers/plivo/machine',
      machine_detection_method: 'POST',
    });
  });

  it('refuses a create answer without request_uuid, not retryably', async () => {
    api = await startFakeCarrierApi(() => ({ status: 201, body: { message: 'call fired' } }));
    const request = { to: '+1', from: '+2', answerUrl: 'https://a', hangupUrl: 'https://h' };
    expect(await rejection(client().originate(request))).toMatchObject({ retryable: false });
  });

  it('reads a live call, then an ended one, then an unknown one, in the common status words', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 200,
      body: { call_status: 'ringing', call_uuid: CALL },
    }));
    expect(await client().status(CALL)).toEqual({
      callSid: CALL,
      status: 'ringing',
      carrierStatus: 'ringing',
    });
    expect(api.requests[0]!.path).toBe(`${CALL_PATH}?status=live`);

    api.respond((req) =>
      req.path.endsWith('?status=live')
        ? { status: 404, body: { error: 'not found' } }
        : { status: 200, body: { call_state: 'BUSY', hangup_cause_name: 'Busy Line' } },
    );
    expect(await client().status(CALL)).toEqual({ callSid: CALL, status: 'busy', carrierStatus: 'BUSY' });

    api.respond((req) =>
      req.path.endsWith('?status=live')
        ? { status: 404, body: { error: 'not found' } }
        : { status: 200, body: { call_state: 'SOMETHING_NEW' } },
    );
    expect(await client().status(CALL)).toEqual({
      callSid: CALL,
      status: 'unknown',
      carrierStatus: 'SOMETHING_NEW',
    });

    // No call by this id: the caller may ask about a request by it (queuedStatus).
    api.respond(() => ({ status: 404, body: { error: 'not found' } }));
    expect(await client().status(CALL)).toBeNull();
  });

  it("reads a queued request's status by its request UUID, and null once Plivo no longer holds it", async () => {
    api = await startFakeCarrierApi(() => ({
      status: 200,
      body: { call_status: 'queued', request_uuid: CALL },
    }));
    expect(await client().queuedStatus(CALL)).toEqual({
      callSid: CALL,
      status: 'queued',
      carrierStatus: 'queued',
    });
    expect(api.requests[0]).toMatchObject({ method: 'GET', path: `${CALL_PATH}?status=queued` });
    expect(api.requests[0]!.authorization).toBe(BASIC);

    // A word it does not know, or none: still a request not answered yet.
    api.respond(() => ({ status: 200, body: { call_status: '<b>' } }));
    expect(await client().queuedStatus(CALL)).toMatchObject({ status: 'queued', carrierStatus: 'unknown' });

    api.respond(() => ({ status: 404, body: { error: 'not found' } }));
    expect(await client().queuedStatus(CALL)).toBeNull();

    api.respond(() => ({ status: 500, body: { error: 'oops' } }));
    expect(await rejection(client().queuedStatus(CALL))).toMatchObject({ status: 500, retryable: true });
  });

  it('cancels a request with DELETE …/Request/{uuid}/, false when Plivo has none', async () => {
    api = await startFakeCarrierApi(() => ({ status: 204 }));
    expect(await client().cancelRequest(CALL)).toBe(true);
    expect(api.requests[0]).toMatchObject({
      method: 'DELETE',
      path: `/v1/Account/${AUTH_ID}/Request/${CALL}/`,
      body: '',
    });
    expect(api.requests[0]!.authorization).toBe(BASIC);
    api.respond(() => ({ status: 404, body: { error: 'not found' } }));
    expect(await client().cancelRequest(CALL)).toBe(false);
    api.respond(() => ({ status: 401, body: { error: 'authentication failed' } }));
    expect(await rejection(client().cancelRequest(CALL))).toMatchObject({ status: 401, retryable: false });
  });
});
