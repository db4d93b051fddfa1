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
  it('places a call and hands it to the callee with its URLs, named by its request UUID', async () => {
    const { requestUuid } = await rest().originate(ORIGINATE);
    expect(placed).toEqual([
      {
        carrier: 'plivo',
        callSid: requestUuid,
        accountSid: AUTH_ID,
        to: '+12125550150',
        from: '+12125550199',
        answerUrl: ORIGINATE.answerUrl,
        statusUrl: ORIGINATE.hangupUrl,
        amdUrl: ORIGINATE.machineDetectionUrl,
      },
    ]);
    expect(sim.calls.get(requestUuid)!.requests[0]!.body).toMatchObject({
      ring_timeout: 30,
      machine_detection: 'true',
      answer_method: 'POST',
      hangup_method: 'POST',
    });
  });

  it('reports ringing and answered calls as live, then how they ended', async () => {
    const { requestUuid } = await rest().originate({ ...ORIGINATE, machineDetection: undefined });
    expect(placed[0]!.amdUrl).toBeNull();
    sim.calls.update(requestUuid, (call) => {
      call.status = 'ringing';
    });
    expect(await rest().status(requestUuid)).toMatchObject({ status: 'ringing', carrierStatus: 'ringing' });
    sim.calls.update(requestUuid, (call) => {
      call.state = 'answered';
      call.status = 'in-progress';
    });
    expect(await rest().status(requestUuid)).toMatchObject({ status: 'in-progress' });
    await rest().hangup(requestUuid);
    expect(await rest().status(requestUuid)).toMatchObject({ status: 'completed', carrierStatus: 'ANSWER' });
    // Hanging up a call that has ended is not an error.
    await rest().hangup(requestUuid);
    sim.calls.update(requestUuid, (call) => {
      call.status = 'busy';
    });
    expect(await rest().status(requestUuid)).toMatchObject({ status: 'busy', carrierStatus: 'BUSY' });
    expect(await rest().status('00000000-0000-4000-8000-000000000000')).toMatchObject({ status: 'unknown' });
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
