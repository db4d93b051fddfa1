// The simulated carrier's Exotel Calls API, driven by the project's own Exotel REST client: what the
// server sends it to place and read calls, and Exotel's refusals of bad requests.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createExotelRest } from '../../../src/carriers/exotel/rest.js';
import type { PlacedSimCall } from '../../../src/sim/carrier-api/handler.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';

let sim: SimulatedCarrierApi;
let placed: PlacedSimCall[];

beforeEach(async () => {
  placed = [];
  sim = await startSimulatedCarrierApi({ onPlaced: (call) => placed.push(call) });
});
afterEach(async () => {
  await sim.close();
});

const rest = () =>
  createExotelRest({ apiUrl: sim.url, accountSid: 'acme1', apiKey: 'k', apiToken: 't', timeoutMs: 2000 });

const CREATE = {
  From: '+919876543210',
  CallerId: '+918012345678',
  Url: 'http://my.exotel.com/acme1/exoml/start_voice/1',
  CustomField: 'c1.a.b',
  StatusCallback: 'http://127.0.0.1:1/carriers/exotel/status',
  TimeOut: '30',
};

async function post(
  form: Record<string, string>,
  authorization = `Basic ${Buffer.from('k:t').toString('base64')}`,
) {
  const res = await fetch(`${sim.url}/v1/Accounts/acme1/Calls/connect.json`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('simulated carrier API: Exotel', () => {
  it('places a call, hands it to the callee with its flow, callback and CustomField, and reads it back', async () => {
    const call = await rest().originate({
      to: CREATE.From,
      callerId: CREATE.CallerId,
      flowUrl: CREATE.Url,
      customField: CREATE.CustomField,
      statusCallback: CREATE.StatusCallback,
      timeoutS: 30,
    });
    expect(call).toEqual({
      callSid: expect.stringMatching(/^[0-9a-f]{32}$/),
      status: 'queued',
      carrierStatus: 'queued',
    });
    expect(placed).toEqual([
      {
        carrier: 'exotel',
        callSid: call.callSid,
        accountSid: 'acme1',
        to: CREATE.From,
        from: CREATE.CallerId,
        answerUrl: CREATE.Url,
        statusUrl: CREATE.StatusCallback,
        amdUrl: null,
        customField: 'c1.a.b',
      },
    ]);
    sim.calls.update(call.callSid, (record) => {
      record.status = 'busy';
      record.state = 'ended';
    });
    expect(await rest().status(call.callSid)).toEqual({
      callSid: call.callSid,
      status: 'busy',
      carrierStatus: 'busy',
    });
  });

  it('answers an unknown call with 404', async () => {
    await expect(rest().status('0123')).rejects.toMatchObject({ status: 404, retryable: false });
  });

  it.each([
    ['no From', { From: undefined }, /'From' number/],
    ['a From that is no number', { From: 'alice' }, /'From' number/],
    ['no CallerId', { CallerId: undefined }, /'CallerId'/],
    ['no Url', { Url: undefined }, /'Url'/],
    ['a Url that is not http(s)', { Url: 'ftp://my.exotel.com/flow' }, /'Url'/],
    ['a StatusCallback that is no URL', { StatusCallback: 'status' }, /'StatusCallback'/],
    ['a TimeOut that is not whole seconds', { TimeOut: '2.5' }, /'TimeOut'/],
    ['a TimeLimit of zero', { TimeLimit: '0' }, /'TimeLimit'/],
    ['a CustomField too long', { CustomField: 'x'.repeat(5000) }, /'CustomField'/],
  ])('refuses %s with 400 in Exotel shape, placing nothing', async (_, change, message) => {
    const form: Record<string, string> = { ...CREATE };
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined) delete form[key];
      else form[key] = value;
    }
    const { status, body } = await post(form);
    expect(status).toBe(400);
    expect(body).toEqual({ RestException: { Status: 400, Message: expect.stringMatching(message) } });
    expect(placed).toEqual([]);
  });

  it.each([
    ['no Authorization', ''],
    ['Bearer', 'Bearer abc'],
    ['Basic without a token', `Basic ${Buffer.from('k:').toString('base64')}`],
  ])('refuses %s with 401', async (_, authorization) => {
    const { status, body } = await post(CREATE, authorization);
    expect(status).toBe(401);
    expect(body).toMatchObject({ RestException: { Status: 401 } });
    expect(placed).toEqual([]);
  });
});
