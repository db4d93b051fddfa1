// The simulated carrier's Twilio Calls API, driven by the project's own Twilio REST client: what
// the server sends it to place, read and hang up calls, and Twilio's refusals.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTwilioRest } from '../../../src/carriers/twilio/rest.js';
import type { PlacedSimCall } from '../../../src/sim/carrier-api/handler.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';

const ACCOUNT = 'ACsimulated';
let sim: SimulatedCarrierApi;
let placed: PlacedSimCall[];

beforeEach(async () => {
  placed = [];
  sim = await startSimulatedCarrierApi({ onPlaced: (call) => placed.push(call) });
});
afterEach(async () => {
  await sim.close();
});

const rest = (accountSid = ACCOUNT) =>
  createTwilioRest({ apiUrl: sim.url, accountSid, authToken: 'simulated', timeoutMs: 2000 });

const CREATE = {
  To: '+12125550100',
  From: '+12125550199',
  Url: 'http://127.0.0.1:1/carriers/twilio/voice?ctx=c1.a.b',
  StatusCallback: 'http://127.0.0.1:1/carriers/twilio/status?ctx=c1.a.b',
  MachineDetection: 'DetectMessageEnd',
  AsyncAmd: 'true',
  AsyncAmdStatusCallback: 'http://127.0.0.1:1/carriers/twilio/amd?ctx=c1.a.b',
};

describe('simulated carrier API: Twilio', () => {
  it('places a call and hands it to the callee with its URLs', async () => {
    const call = await rest().createCall(CREATE);
    expect(call).toEqual({ sid: expect.stringMatching(/^CA[0-9a-f]{32}$/), status: 'queued' });
    expect(placed).toEqual([
      {
        carrier: 'twilio',
        callSid: call.sid,
        accountSid: ACCOUNT,
        to: CREATE.To,
        from: CREATE.From,
        answerUrl: CREATE.Url,
        statusUrl: CREATE.StatusCallback,
        amdUrl: CREATE.AsyncAmdStatusCallback,
      },
    ]);
    expect(await rest().getCall(call.sid)).toEqual({ status: 'queued', durationS: null });
  });

  it('cancels a ringing call on hang-up, and knows no call it never placed', async () => {
    const call = await rest().createCall(CREATE);
    await rest().hangup(call.sid);
    expect(await rest().getCall(call.sid)).toEqual({ status: 'canceled', durationS: null });
    expect(sim.calls.get(call.sid)?.state).toBe('ended');
    expect(await rest().getCall('CA00000000000000000000000000000000')).toBeNull();
  });

  it("refuses a call without a number or URL, with Twilio's codes, and other accounts' paths", async () => {
    await expect(rest().createCall({ ...CREATE, To: 'nobody' })).rejects.toMatchObject({
      status: 400,
      carrierCode: 21201,
      retryable: false,
    });
    await expect(rest().createCall({ ...CREATE, Url: 'ftp://x' })).rejects.toMatchObject({
      carrierCode: 21205,
    });
    const res = await fetch(`${sim.url}/2010-04-01/Accounts/ACother/Calls.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${ACCOUNT}:x`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
    expect(placed).toEqual([]);
  });
});
