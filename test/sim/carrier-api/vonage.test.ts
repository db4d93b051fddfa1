// The simulated carrier's Vonage Voice API, driven by the project's own Vonage REST client with the
// tokens it signs for the simulation: what the server sends it to place, read and hang up calls,
// and Vonage's refusals of bad requests and of requests without an application JWT.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { simulatedAppTokenSource } from '../../../src/carriers/vonage/app-token.js';
import { createVonageRest } from '../../../src/carriers/vonage/rest.js';
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

const token = simulatedAppTokenSource();
const rest = () => createVonageRest({ apiUrl: sim.url, token, timeoutMs: 5000 });
const BASE = 'http://127.0.0.1:1/carriers/vonage';
const ORIGINATE = {
  to: '+447700900150',
  from: '+447700900000',
  answerUrl: `${BASE}/answer?direction=outbound&context=c1.a.b`,
  eventUrl: `${BASE}/events?context=c1.a.b`,
  ringingTimerS: 30,
  machineDetection: { behavior: 'continue' as const, mode: 'detect_beep' as const, beepTimeoutS: 45 },
};

const VALID = {
  to: [{ type: 'phone', number: '447700900150' }],
  from: { type: 'phone', number: '447700900000' },
  answer_url: [`${BASE}/answer`],
  event_url: [`${BASE}/events`],
};

async function create(body: unknown, authorization?: string) {
  const res = await fetch(`${sim.url}/v1/calls`, {
    method: 'POST',
    headers: {
      authorization: authorization ?? `Bearer ${await token()}`,
      'content-type': 'application/json',
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('simulated carrier API: Vonage', () => {
  it('places a call and hands it to the callee with its URLs', async () => {
    const state = await rest().originate(ORIGINATE);
    expect(state).toMatchObject({ status: 'queued', carrierStatus: 'started' });
    expect(placed).toEqual([
      {
        carrier: 'vonage',
        callSid: state.callSid,
        accountSid: '',
        to: '+447700900150',
        from: '+447700900000',
        answerUrl: ORIGINATE.answerUrl,
        statusUrl: ORIGINATE.eventUrl,
        amdUrl: ORIGINATE.eventUrl,
      },
    ]);
  });

  it('reads a call, cancels it when hung up while ringing, and answers 404 after', async () => {
    const state = await rest().originate({ ...ORIGINATE, machineDetection: undefined });
    expect(placed[0]!.amdUrl).toBeNull();
    sim.calls.update(state.callSid, (call) => {
      call.status = 'ringing';
    });
    expect(await rest().status(state.callSid)).toMatchObject({ status: 'ringing' });
    await rest().hangup(state.callSid);
    expect(await rest().status(state.callSid)).toMatchObject({
      status: 'canceled',
      carrierStatus: 'cancelled',
    });
    // Hanging up an ended call is not an error to the client.
    await rest().hangup(state.callSid);
    await expect(rest().status('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      status: 404,
      carrierCode: 'not-found',
    });
  });

  it('records a transfer', async () => {
    const state = await rest().originate(ORIGINATE);
    await rest().transfer(state.callSid, '+447700900999');
    expect(sim.calls.get(state.callSid)!.transferredTo).toBe('447700900999');
  });

  it.each([
    ['not JSON', 'to=1', 'the body must be a JSON object', undefined],
    ['no to', { ...VALID, to: undefined }, undefined, 'to'],
    ['a to that is no phone', { ...VALID, to: [{ type: 'sip', uri: 'sip:a@b' }] }, undefined, 'to'],
    [
      'a to number with a plus',
      { ...VALID, to: [{ type: 'phone', number: '+447700900150' }] },
      undefined,
      'to.number',
    ],
    ['no from', { ...VALID, from: undefined }, undefined, 'from'],
    ['no answer_url', { ...VALID, answer_url: undefined }, undefined, 'answer_url'],
    ['an answer_url that is a string', { ...VALID, answer_url: `${BASE}/answer` }, undefined, 'answer_url'],
    ['an ncco instead', { ...VALID, answer_url: undefined, ncco: [] }, undefined, 'answer_url'],
    ['an event_url that is no URL', { ...VALID, event_url: ['nowhere'] }, undefined, 'event_url'],
    ['a ringing_timer of 0', { ...VALID, ringing_timer: 0 }, undefined, 'ringing_timer'],
    [
      'detection with no behavior',
      { ...VALID, advanced_machine_detection: { mode: 'detect_beep' } },
      undefined,
      'advanced_machine_detection.behavior',
    ],
    [
      'detection with an unknown mode',
      { ...VALID, advanced_machine_detection: { behavior: 'continue', mode: 'guess' } },
      undefined,
      'advanced_machine_detection.mode',
    ],
    [
      'a beep_timeout of 5',
      { ...VALID, advanced_machine_detection: { behavior: 'continue', beep_timeout: 5 } },
      undefined,
      'advanced_machine_detection.beep_timeout',
    ],
  ])(
    "refuses a create request with %s: 400 in Vonage's shape, no call placed",
    async (_name, body, detail, parameter) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.type).toBe('https://developer.nexmo.com/api-errors#validation');
      if (detail !== undefined) expect(res.body.detail).toBe(detail);
      if (parameter !== undefined) {
        expect(res.body.invalid_parameters).toEqual([{ name: parameter, reason: expect.any(String) }]);
      }
      expect(placed).toEqual([]);
    },
  );

  it.each([
    ['no token', ''],
    ['a Basic credential', `Basic ${Buffer.from('key:secret').toString('base64')}`],
    ['a token that is not a JWT', 'Bearer not-a-jwt'],
    [
      'an HS256 token',
      `Bearer ${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"application_id":"a","iat":1,"exp":9999999999,"jti":"j"}').toString('base64url')}.c2ln`,
    ],
    [
      'an expired token',
      `Bearer ${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"application_id":"a","iat":1,"exp":2,"jti":"j"}').toString('base64url')}.c2ln`,
    ],
    [
      'a token naming no application',
      `Bearer ${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from('{"iat":1,"exp":9999999999,"jti":"j"}').toString('base64url')}.c2ln`,
    ],
  ])('refuses a request with %s: 401, no call placed', async (_name, authorization) => {
    const res = await create(VALID, authorization);
    expect(res.status).toBe(401);
    expect(res.body.type).toBe('https://developer.nexmo.com/api-errors#unauthorized');
    expect(placed).toEqual([]);
  });
});
