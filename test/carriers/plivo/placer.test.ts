// Placing calls through Plivo against a fake of its REST API scripted by each test: the create
// request's fields (our answer, hang-up and machine-detection URLs, each carrying the sealed
// context), caller ID defaults, errors classified retryable or not, status and hang-up.
import { afterEach, describe, expect, it } from 'vitest';
import { createPlivoPlacer } from '../../../src/carriers/plivo/placer.js';
import { createPlivoRest } from '../../../src/carriers/plivo/rest.js';
import { CarrierApiError } from '../../../src/errors.js';
import {
  type FakeApiResponder,
  type FakeCarrierApi,
  startFakeCarrierApi,
} from '../../helpers/fake-carrier-api.js';

const AUTH_ID = 'MA0000000000000000AB';
const PUBLIC_URL = 'https://bridge.example.com/';
const CONTEXT = 'c1.eyJhIjoxfQ.c2lnbmVk';
let api: FakeCarrierApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function placer(responder: FakeApiResponder, defaultFrom: string | null = '+12125550199') {
  api = await startFakeCarrierApi(responder);
  const rest = createPlivoRest({
    apiUrl: api.url,
    authId: AUTH_ID,
    authToken: 'plivo-token',
    publicUrl: () => PUBLIC_URL,
    timeoutMs: 2000,
  });
  return createPlivoPlacer({ rest, publicUrl: () => PUBLIC_URL, defaultFrom });
}

const CALL_PATH = (id: string) => `/v1/Account/${AUTH_ID}/Call/${id}/`;
const fired = { status: 201, body: { api_id: 'a', message: 'call fired', request_uuid: 'req-1' } };
const request = { to: '+12125550150', from: null, context: CONTEXT, detectMachine: true };

describe('the Plivo call placer', () => {
  it('creates the call with our URLs carrying the context, detection asked for, and returns the request UUID', async () => {
    const plivo = await placer(() => fired);
    expect(await plivo.place(request)).toEqual({ callSid: 'req-1' });
    const [create] = api!.requests;
    expect(create).toMatchObject({ method: 'POST', path: `/v1/Account/${AUTH_ID}/Call/` });
    expect(create!.authorization).toBe(`Basic ${Buffer.from(`${AUTH_ID}:plivo-token`).toString('base64')}`);
    const base = 'https://bridge.example.com/carriers/plivo';
    expect(JSON.parse(create!.body)).toEqual({
      from: '12125550199',
      to: '12125550150',
      answer_url: `${base}/answer?context=${CONTEXT}`,
      answer_method: 'POST',
      hangup_url: `${base}/hangup?context=${CONTEXT}`,
      hangup_method: 'POST',
      ring_timeout: 30,
      machine_detection: 'true',
      machine_detection_url: `${base}/machine?context=${CONTEXT}`,
      machine_detection_method: 'POST',
    });
  });

  it('asks for no detection when none is wanted, and uses the caller ID given', async () => {
    const plivo = await placer(() => fired);
    await plivo.place({ ...request, from: '+442079460018', detectMachine: false });
    const body = JSON.parse(api!.requests[0]!.body) as Record<string, unknown>;
    expect(body.from).toBe('442079460018');
    expect(body.machine_detection).toBeUndefined();
    expect(body.machine_detection_url).toBeUndefined();
  });

  it('refuses to place a call with no caller ID, as not retryable, asking Plivo nothing', async () => {
    const plivo = await placer(() => fired, null);
    const err = await plivo.place(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarrierApiError);
    expect(err).toMatchObject({ carrier: 'plivo', retryable: false });
    expect(api!.requests).toEqual([]);
  });

  it.each([
    [500, true],
    [503, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ])('classifies HTTP %i from the create request as retryable: %s', async (status, retryable) => {
    const plivo = await placer(() => ({ status, body: { api_id: 'a', error: 'to 12125550150 is bad' } }));
    const err = (await plivo.place(request).catch((e: unknown) => e)) as CarrierApiError;
    expect(err).toBeInstanceOf(CarrierApiError);
    expect(err).toMatchObject({ retryable, status });
    // Plivo's error text can quote the number: it is never in the message.
    expect(err.message).not.toContain('12125550150');
  });

  it('takes a create answer without a request UUID as not retryable (the call may exist)', async () => {
    const plivo = await placer(() => ({ status: 201, body: { api_id: 'a', message: 'call fired' } }));
    await expect(plivo.place(request)).rejects.toMatchObject({ retryable: false });
  });

  it('reads a call by its CallUUID: live, then ended, asking nothing of requests', async () => {
    let live = true;
    const plivo = await placer((req) => {
      if (req.path.endsWith('?status=live')) {
        return live ? { status: 200, body: { call_status: 'ringing' } } : { status: 404, body: {} };
      }
      return { status: 200, body: { call_state: 'BUSY' } };
    });
    expect(await plivo.status('call-1')).toEqual({
      callSid: 'call-1',
      status: 'ringing',
      carrierStatus: 'ringing',
    });
    live = false;
    expect(await plivo.status('call-1')).toEqual({
      callSid: 'call-1',
      status: 'busy',
      carrierStatus: 'BUSY',
    });
    expect(api!.requests.map((r) => r.path)).toEqual([
      `${CALL_PATH('call-1')}?status=live`,
      `${CALL_PATH('call-1')}?status=live`,
      CALL_PATH('call-1'),
    ]);
  });

  it('reads a call no webhook has named yet by its request UUID, as a queued request', async () => {
    let queued = true;
    const plivo = await placer((req) => {
      if (req.path.endsWith('?status=queued') && queued) {
        return { status: 200, body: { call_status: 'queued', request_uuid: 'req-1' } };
      }
      return { status: 404, body: { error: 'not found' } };
    });
    expect(await plivo.status('req-1')).toEqual({
      callSid: 'req-1',
      status: 'queued',
      carrierStatus: 'queued',
    });
    expect(api!.requests.map((r) => r.path)).toEqual([
      `${CALL_PATH('req-1')}?status=live`,
      CALL_PATH('req-1'),
      `${CALL_PATH('req-1')}?status=queued`,
    ]);
    // Neither a call nor a queued request: Plivo has nothing by this id.
    queued = false;
    expect(await plivo.status('req-1')).toEqual({
      callSid: 'req-1',
      status: 'unknown',
      carrierStatus: 'unknown',
    });
  });

  it('hangs up a call by its CallUUID with one DELETE', async () => {
    const plivo = await placer(() => ({ status: 204 }));
    await plivo.hangup('call-1');
    expect(api!.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`DELETE ${CALL_PATH('call-1')}`]);
  });

  it('cancels a call no webhook has named yet by its request UUID', async () => {
    const plivo = await placer((req) =>
      req.path.includes('/Request/') ? { status: 204 } : { status: 404, body: { error: 'not found' } },
    );
    await plivo.hangup('req-1');
    expect(api!.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `DELETE ${CALL_PATH('req-1')}`,
      `DELETE /v1/Account/${AUTH_ID}/Request/req-1/`,
    ]);
  });

  it('takes an id Plivo knows neither as a call nor as a request as ended', async () => {
    const plivo = await placer(() => ({ status: 404, body: { error: 'not found' } }));
    await expect(plivo.hangup('gone-1')).resolves.toBeUndefined();
    expect(api!.requests).toHaveLength(2);
  });

  it('passes on a failed cancel of a request, retryable when Plivo says so', async () => {
    const plivo = await placer((req) =>
      req.path.includes('/Request/') ? { status: 503 } : { status: 404, body: { error: 'not found' } },
    );
    await expect(plivo.hangup('req-1')).rejects.toMatchObject({ retryable: true, status: 503 });
  });

  it('passes on a failed hang-up, retryable when Plivo says so', async () => {
    const plivo = await placer(() => ({ status: 502 }));
    await expect(plivo.hangup('req-1')).rejects.toMatchObject({ retryable: true, status: 502 });
  });
});
