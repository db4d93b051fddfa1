// The simulated carrier's Plivo Call API, driven by the project's own Plivo REST client: what the
// server sends it to place, read and hang up calls, and Plivo's refusals of bad requests.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPlivoRest } from '../../../src/carriers/plivo/rest.js';
import type { PlacedSimCall } from '../../../src/sim/carrier-api/handler.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';

const AUTH_ID = 'MASIMULATED000000000';
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
  createPlivoRest({
    apiUrl: sim.url,
    authId: AUTH_ID,
    authToken: 'simulated',
    publicUrl: () => 'http://127.0.0.1:1',
    timeoutMs: 2000,
  });

const BASE = 'http://127.0.0.1:1/carriers/plivo';
const ORIGINATE = {
  to: '+12125550150',
  from: '+12125550199',
  answerUrl: `${BASE}/answer?context=c1.a.b`,
  hangupUrl: `${BASE}/hangup?context=c1.a.b`,
  ringTimeoutSec: 30,
  machineDetection: 'true' as const,
  machineDetectionUrl: `${BASE}/machine?context=c1.a.b`,
};

/** Posts a create-call body as the server would, authenticated. */
function create(body: unknown) {
  return fetch(`${sim.url}/v1/Account/${AUTH_ID}/Call/`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${AUTH_ID}:t`).toString('base64')}`,
      'content-type': 'application/json',
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const VALID = {
  from: '12125550199',
  to: '12125550150',
  answer_url: `${BASE}/answer`,
  hangup_url: `${BASE}/hangup`,
};

describe('simulated carrier API: Plivo outbound calls', () => {
  it('places a call and hands it to the callee with its URLs, its CallUUID apart from the request UUID', async () => {
    const { requestUuid } = await rest().originate(ORIGINATE);
    const callUuid = placed[0]!.callSid;
    expect(callUuid).not.toBe(requestUuid);
    expect(placed).toEqual([
      {
        carrier: 'plivo',
        callSid: callUuid,
        requestId: requestUuid,
        accountSid: AUTH_ID,
        to: '+12125550150',
        from: '+12125550199',
        answerUrl: ORIGINATE.answerUrl,
        statusUrl: ORIGINATE.hangupUrl,
        amdUrl: ORIGINATE.machineDetectionUrl,
      },
    ]);
    expect(sim.calls.get(requestUuid)).toBeUndefined();
    expect(sim.calls.get(callUuid)).toMatchObject({ requestId: requestUuid, status: 'queued' });
    expect(sim.calls.get(callUuid)!.requests[0]!.body).toMatchObject({
      ring_timeout: 30,
      machine_detection: 'true',
      answer_method: 'POST',
      hangup_method: 'POST',
    });
  });

  it('reports ringing and answered calls as live by their CallUUID, then how they ended', async () => {
    await rest().originate({ ...ORIGINATE, machineDetection: undefined });
    expect(placed[0]!.amdUrl).toBeNull();
    const callUuid = placed[0]!.callSid;
    sim.calls.update(callUuid, (call) => {
      call.status = 'ringing';
    });
    expect(await rest().status(callUuid)).toMatchObject({ status: 'ringing', carrierStatus: 'ringing' });
    sim.calls.update(callUuid, (call) => {
      call.state = 'answered';
      call.status = 'in-progress';
    });
    expect(await rest().status(callUuid)).toMatchObject({ status: 'in-progress' });
    expect(await rest().hangup(callUuid)).toBe(true);
    expect(await rest().status(callUuid)).toMatchObject({ status: 'completed', carrierStatus: 'ANSWER' });
    // Hanging up a call that has ended is not an error.
    expect(await rest().hangup(callUuid)).toBe(false);
    sim.calls.update(callUuid, (call) => {
      call.status = 'busy';
    });
    expect(await rest().status(callUuid)).toMatchObject({ status: 'busy', carrierStatus: 'BUSY' });
    expect(await rest().status('00000000-0000-4000-8000-000000000000')).toBeNull();
  });

  it('knows a call by its request UUID only as a queued request, until it is answered', async () => {
    const { requestUuid } = await rest().originate(ORIGINATE);
    const callUuid = placed[0]!.callSid;
    // The call paths know the CallUUID only.
    expect(await rest().status(requestUuid)).toBeNull();
    expect(await rest().hangup(requestUuid)).toBe(false);
    expect(sim.calls.get(callUuid)).toMatchObject({ state: 'ringing', status: 'queued' });
    expect(await rest().queuedStatus(requestUuid)).toEqual({
      callSid: requestUuid,
      status: 'queued',
      carrierStatus: 'queued',
    });
    sim.calls.update(callUuid, (call) => {
      call.status = 'ringing';
    });
    expect(await rest().queuedStatus(requestUuid)).toMatchObject({ status: 'ringing' });
    // The queued read takes a request UUID, not a CallUUID.
    expect(await rest().queuedStatus(callUuid)).toBeNull();
    sim.calls.update(callUuid, (call) => {
      call.state = 'answered';
      call.status = 'in-progress';
    });
    expect(await rest().queuedStatus(requestUuid)).toBeNull();
    expect(await rest().cancelRequest(requestUuid)).toBe(false);
    expect(sim.calls.get(callUuid)).toMatchObject({ state: 'answered' });
  });

  it('cancels a ringing call by its request UUID, once', async () => {
    const { requestUuid } = await rest().originate(ORIGINATE);
    const callUuid = placed[0]!.callSid;
    expect(await rest().cancelRequest(requestUuid)).toBe(true);
    expect(sim.calls.get(callUuid)).toMatchObject({ state: 'ended', status: 'canceled' });
    expect(sim.calls.get(callUuid)!.requests.map((r) => r.action)).toEqual(['create', 'cancel']);
    expect(await rest().status(callUuid)).toMatchObject({ status: 'canceled', carrierStatus: 'CANCEL' });
    expect(await rest().cancelRequest(requestUuid)).toBe(false);
    expect(await rest().cancelRequest(callUuid)).toBe(false);
    expect(await rest().cancelRequest('00000000-0000-4000-8000-000000000000')).toBe(false);
  });

  it('refuses a cancel or queued read without credentials for the account', async () => {
    const { requestUuid } = await rest().originate(ORIGINATE);
    const other = `Basic ${Buffer.from('MAOTHER:t').toString('base64')}`;
    for (const [method, path] of [
      ['DELETE', `/v1/Account/${AUTH_ID}/Request/${requestUuid}/`],
      ['GET', `/v1/Account/${AUTH_ID}/Call/${requestUuid}/?status=queued`],
    ] as const) {
      expect((await fetch(`${sim.url}${path}`, { method })).status).toBe(401);
      expect((await fetch(`${sim.url}${path}`, { method, headers: { authorization: other } })).status).toBe(
        401,
      );
    }
    expect(sim.calls.get(placed[0]!.callSid)).toMatchObject({ state: 'ringing' });
  });

  it.each([
    ['not JSON', 'from=1', /JSON object/],
    ['an array', [], /JSON object/],
    ['no from', { ...VALID, from: undefined }, /^from /],
    ['a from that is no number', { ...VALID, from: 'caller' }, /^from /],
    ['no to', { ...VALID, to: undefined }, /^to /],
    ['a to of letters', { ...VALID, to: '1212555ABCD' }, /^to /],
    ['no answer_url', { ...VALID, answer_url: undefined }, /^answer_url /],
    ['an answer_url that is not http', { ...VALID, answer_url: 'ftp://x/y' }, /^answer_url /],
    ['a hangup_url that is no URL', { ...VALID, hangup_url: 'nowhere' }, /^hangup_url /],
    ['a ring_timeout of 0', { ...VALID, ring_timeout: 0 }, /^ring_timeout /],
    ['a ring_timeout of words', { ...VALID, ring_timeout: 'long' }, /^ring_timeout /],
    ['an unknown machine_detection', { ...VALID, machine_detection: 'maybe' }, /^machine_detection /],
  ])('refuses a create request with %s: 400 with an error, no call placed', async (_name, body, message) => {
    const res = await create(body);
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { api_id: string; error: string };
    expect(answer.error).toMatch(message);
    expect(placed).toEqual([]);
  });

  it('is refused as not retryable through the REST client, which names only the status', async () => {
    await expect(rest().originate({ ...ORIGINATE, to: '+1' })).rejects.toMatchObject({
      status: 400,
      retryable: false,
      message: 'plivo create call: HTTP 400',
    });
  });
});
