// The simulated carrier's Telnyx Call Control API for outbound calls, driven by the project's own
// Telnyx REST client where it can be: a call placed with POST /v2/calls is handed to the callee with
// its webhook and client state, ringing reads alive, a hang-up ends it, and every malformed create
// request is refused with a 422 in Telnyx's error shape, placing nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
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
  createTelnyxRest({ apiUrl: sim.url, apiKey: 'simulated', connectionId: 'conn-1', timeoutMs: 2000 });

const WEBHOOK = 'http://127.0.0.1:1/carriers/telnyx/events';
const CREATE = {
  connection_id: 'conn-1',
  to: '+12125550100',
  from: '+12125550199',
  webhook_url: WEBHOOK,
  client_state: 'eyJjYiI6MX0=',
  answering_machine_detection: 'greeting_end',
};

function create(body: unknown, raw?: string) {
  return fetch(`${sim.url}/v2/calls`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  });
}

describe('simulated carrier API: Telnyx outbound calls', () => {
  it('places a call and hands it to the callee with its webhook, detection and client state', async () => {
    const call = await rest().originate({
      to: CREATE.to,
      from: CREATE.from,
      webhookUrl: WEBHOOK,
      clientState: CREATE.client_state,
      amd: 'greeting_end',
    });
    expect(call.callSid).toMatch(/^v3:sim-/);
    expect(placed).toEqual([
      {
        carrier: 'telnyx',
        callSid: call.callSid,
        accountSid: 'conn-1',
        to: CREATE.to,
        from: CREATE.from,
        answerUrl: WEBHOOK,
        statusUrl: WEBHOOK,
        amdUrl: WEBHOOK,
        clientState: CREATE.client_state,
      },
    ]);
    expect(await rest().status(call.callSid)).toMatchObject({ status: 'in-progress' });
  });

  it('asks no detection verdicts when detection is off or disabled', async () => {
    await rest().originate({ to: CREATE.to, from: CREATE.from, webhookUrl: WEBHOOK });
    expect((await create({ ...CREATE, answering_machine_detection: 'disabled' })).status).toBe(200);
    expect(placed.map((call) => call.amdUrl)).toEqual([null, null]);
  });

  it('ends a ringing call on hang-up, then answers 90018, and knows no call it never placed', async () => {
    const call = await rest().originate({ to: CREATE.to, from: CREATE.from, webhookUrl: WEBHOOK });
    await rest().hangup(call.callSid);
    expect(sim.calls.get(call.callSid)?.state).toBe('ended');
    expect(await rest().status(call.callSid)).toMatchObject({
      status: 'failed',
      carrierStatus: 'ended unanswered',
    });
    await expect(rest().hangup(call.callSid)).resolves.toBeUndefined();
    expect(await rest().status('v3:sim-never')).toMatchObject({ status: 'unknown' });
  });

  it.each([
    ['no connection_id', { connection_id: undefined }, 'connection_id'],
    ['a number-less to', { to: 'nobody' }, 'to'],
    ['a numeric from', { from: 12125550199 }, 'from'],
    ['no webhook_url', { webhook_url: undefined }, 'webhook_url'],
    ['an ftp webhook_url', { webhook_url: 'ftp://x/events' }, 'webhook_url'],
    ['an unknown detection mode', { answering_machine_detection: 'psychic' }, 'answering_machine_detection'],
    [
      'a detection config list',
      { answering_machine_detection_config: [1] },
      'answering_machine_detection_config',
    ],
    ['a client_state not base64', { client_state: 'not base64!' }, 'client_state'],
    ['an http stream_url', { stream_url: 'http://x/media' }, 'stream_url'],
    ['a fractional timeout_secs', { timeout_secs: 1.5 }, 'timeout_secs'],
  ])('refuses a create with %s: 422 naming the field, nothing placed', async (_name, change, pointer) => {
    const res = await create({ ...CREATE, ...change });
    expect(res.status).toBe(422);
    const body = (await res.json()) as {
      errors: Array<{ code: string; detail: string; source: { pointer: string } }>;
    };
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.source.pointer).toBe(`/${pointer}`);
    expect(body.errors[0]!.detail).toContain(pointer);
    expect(placed).toEqual([]);
    expect(sim.calls.size).toBe(0);
  });

  it('refuses a body that is no JSON object, and a create without a Bearer key', async () => {
    expect((await create(undefined, '[1,2]')).status).toBe(422);
    expect((await create(undefined, '{"to":')).status).toBe(422);
    const noAuth = await fetch(`${sim.url}/v2/calls`, { method: 'POST', body: JSON.stringify(CREATE) });
    expect(noAuth.status).toBe(401);
    expect(placed).toEqual([]);
  });

  it('through the client: a refusal is not retryable and names Telnyx code', async () => {
    await expect(
      rest().originate({ to: 'nobody', from: CREATE.from, webhookUrl: WEBHOOK }),
    ).rejects.toMatchObject({
      status: 422,
      carrierCode: '10015',
      retryable: false,
    });
  });
});
