// The simulated carrier API over real HTTP, driven by the project's own REST clients where they
// exist (what callbridge will send it) and by plain fetch for the edges.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPlivoRest } from '../../../src/carriers/plivo/rest.js';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';

let sim: SimulatedCarrierApi;

beforeEach(async () => {
  sim = await startSimulatedCarrierApi();
});

afterEach(async () => {
  await sim.close();
});

const CALL = 'v3:sim-inbound-1';
const AUTH_ID = 'MASIMULATED000000000';

const telnyx = () =>
  createTelnyxRest({ apiUrl: sim.url, apiKey: 'simulated', connectionId: 'conn-1', timeoutMs: 2000 });
const plivo = () =>
  createPlivoRest({
    apiUrl: sim.url,
    authId: AUTH_ID,
    authToken: 'simulated',
    publicUrl: () => 'https://bridge.example.com',
    timeoutMs: 2000,
  });

async function getJson(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}${path}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('simulated carrier API: the server', () => {
  it('listens on loopback on an ephemeral port', () => {
    expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers unknown paths and methods with the project error', async () => {
    expect(await getJson('/nope')).toEqual({
      status: 404,
      body: { error: { code: 'CALLBRIDGE_NOT_FOUND', message: 'no simulated carrier route for this path' } },
    });
    const res = await fetch(`${sim.url}/v2/calls/x/actions/answer`, { method: 'DELETE' });
    expect(res.status).toBe(405);
  });

  it('refuses a body over 64 KiB', async () => {
    const res = await fetch(`${sim.url}/v2/calls`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: 'x'.repeat(70 * 1024),
    });
    expect(res.status).toBe(413);
  });

  it('says when it was asked nothing about a call', async () => {
    expect((await getJson('/sim/calls/unknown')).status).toBe(404);
    expect((await getJson('/sim/calls/x?wait=forever')).status).toBe(400);
  });

  it('ends pending waits when it closes', async () => {
    const pending = fetch(
      `${sim.url}/sim/calls/${encodeURIComponent(CALL)}?wait=answer&timeoutMs=30000`,
    ).then(
      (res) => res.status,
      () => 'closed',
    );
    await expect.poll(() => sim.calls.waitCount).toBe(1);
    const started = Date.now();
    await sim.close();
    expect(await pending).toBeDefined();
    expect(Date.now() - started).toBeLessThan(2000);
    sim = await startSimulatedCarrierApi();
  });
});

describe('simulated carrier API: Telnyx', () => {
  it('records the answer, and tells the phone where to open the media stream', async () => {
    await telnyx().answer(CALL, {
      mediaUrl: 'ws://127.0.0.1:1/media/telnyx/i/tok',
      codec: 'PCMU',
      clientState: 'cs',
    });
    const { status, body } = await getJson(`/sim/calls/${encodeURIComponent(CALL)}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      carrier: 'telnyx',
      callSid: CALL,
      state: 'answered',
      streamUrl: 'ws://127.0.0.1:1/media/telnyx/i/tok',
      requests: [{ action: 'answer', body: expect.objectContaining({ stream_bidirectional_mode: 'rtp' }) }],
    });
  });

  it('holds a wait for the answer until it comes', async () => {
    const waited = getJson(`/sim/calls/${encodeURIComponent(CALL)}?wait=answer&timeoutMs=5000`);
    await expect.poll(() => sim.calls.waitCount).toBe(1);
    await telnyx().answer(CALL, { mediaUrl: 'ws://x/m', codec: 'PCMU', clientState: 'cs' });
    expect((await waited).body).toMatchObject({ streamUrl: 'ws://x/m' });
  });

  it('gives up a wait after its timeout, saying nothing was asked', async () => {
    expect((await getJson(`/sim/calls/other?wait=answer&timeoutMs=50`)).status).toBe(404);
  });

  it('records streaming_start, speak and transfer', async () => {
    const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
    const action = (name: string, body: unknown) =>
      fetch(`${sim.url}/v2/calls/${encodeURIComponent(CALL)}/actions/${name}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
      });
    expect((await action('streaming_start', { stream_url: 'ws://x/late' })).status).toBe(200);
    await telnyx().speak(CALL, 'Please call back later.', 'cs');
    await telnyx().transfer(CALL, '+15550100');
    expect(sim.calls.get(CALL)).toMatchObject({
      streamUrl: 'ws://x/late',
      spoken: ['Please call back later.'],
      transferredTo: '+15550100',
    });
  });

  it('answers a command on an ended call with 422 code 90018, which the client takes as done', async () => {
    await telnyx().hangup(CALL);
    await expect(telnyx().hangup(CALL)).resolves.toBeUndefined();
    await expect(telnyx().transfer(CALL, '+15550100')).rejects.toMatchObject({
      status: 422,
      carrierCode: '90018',
    });
    expect(sim.calls.get(CALL)!.requests.map((r) => r.action)).toEqual(['hangup', 'hangup', 'transfer']);
  });

  it('records outbound calls and reports their status', async () => {
    const placed = await telnyx().originate({
      to: '+15550100',
      from: '+15550199',
      stream: { mediaUrl: 'ws://x/out', codec: 'PCMU' },
      webhookUrl: 'http://127.0.0.1:1/carriers/telnyx/events',
      amd: 'detect',
    });
    expect(placed.callSid).toMatch(/^v3:sim-/);
    // Nobody answers here (no callee): the call rings, which Telnyx reads as alive.
    expect(await telnyx().status(placed.callSid)).toEqual({
      callSid: placed.callSid,
      status: 'in-progress',
      carrierStatus: 'alive',
    });
    const own = await getJson(`/sim/calls/${encodeURIComponent(placed.callSid)}`);
    expect(own.body).toMatchObject({
      callSid: placed.callSid,
      streamUrl: 'ws://x/out',
      requests: [
        { action: 'create', body: expect.objectContaining({ answering_machine_detection: 'detect' }) },
      ],
    });
  });

  it('lists calls without what opens them: no stream URL, no requests, no tokens', async () => {
    // Issue 19: the list once showed live stream URLs with their tokens to any local process.
    const placed = await telnyx().originate({
      to: '+15550100',
      from: '+15550199',
      stream: { mediaUrl: 'ws://x/media/telnyx/i-1/v1.secret-token.sig', codec: 'PCMU' },
      webhookUrl: 'http://127.0.0.1:1/carriers/telnyx/events',
      amd: 'detect',
    });
    const listed = await getJson('/sim/calls');
    const [call] = listed.body.calls as Array<Record<string, unknown>>;
    expect(Object.keys(call!).sort()).toEqual(['callSid', 'carrier', 'createdAtMs', 'state', 'status']);
    expect(call!.callSid).toBe(placed.callSid);
    expect(JSON.stringify(listed.body)).not.toContain('secret-token');
  });

  it('refuses requests without a Bearer key, and unknown actions', async () => {
    const noAuth = await fetch(`${sim.url}/v2/calls/${CALL}/actions/answer`, { method: 'POST', body: '{}' });
    expect(noAuth.status).toBe(401);
    expect(await noAuth.json()).toEqual({ errors: [{ code: '10009', title: 'Authentication failed' }] });
    const unknown = await fetch(`${sim.url}/v2/calls/${CALL}/actions/fly`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
    });
    expect(unknown.status).toBe(404);
    expect(sim.calls.size).toBe(0);
  });
});

describe('simulated carrier API: Plivo', () => {
  const UUID = 'c1f7e3a0-1111-2222-3333-444455556666';

  it('hangs up once (204), then says the call is gone (404), which the client takes as done', async () => {
    await plivo().hangup(UUID);
    await plivo().hangup(UUID);
    expect(sim.calls.get(UUID)).toMatchObject({ carrier: 'plivo', state: 'ended' });
    const res = await fetch(`${sim.url}/v1/Account/${AUTH_ID}/Call/${UUID}/`, {
      method: 'DELETE',
      headers: { authorization: `Basic ${Buffer.from(`${AUTH_ID}:t`).toString('base64')}` },
    });
    expect(res.status).toBe(404);
  });

  it('records a transfer of the A leg to our transfer route', async () => {
    await plivo().transfer(UUID, '+15550100');
    expect(sim.calls.get(UUID)).toMatchObject({
      transferredTo: 'https://bridge.example.com/carriers/plivo/transfer?to=%2B15550100',
      requests: [{ action: 'transfer', body: { legs: 'aleg', aleg_method: 'POST' } }],
    });
  });

  it('takes a form-encoded transfer too, and refuses one without aleg_url', async () => {
    const auth = { authorization: `Basic ${Buffer.from(`${AUTH_ID}:t`).toString('base64')}` };
    const post = (body: string) =>
      fetch(`${sim.url}/v1/Account/${AUTH_ID}/Call/${UUID}/`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    expect((await post('legs=aleg&aleg_url=https%3A%2F%2Fx%2Ft')).status).toBe(202);
    expect((await post('legs=aleg')).status).toBe(400);
  });

  it('records outbound calls, and reports queued then canceled once hung up before an answer', async () => {
    const placed = await plivo().originate({
      to: '+15550100',
      from: '+15550199',
      answerUrl: 'https://bridge.example.com/carriers/plivo/answer',
      hangupUrl: 'https://bridge.example.com/carriers/plivo/hangup',
      machineDetection: 'true',
    });
    const call = sim.calls.byRequestId('plivo', placed.requestUuid)!;
    expect(call.callSid).not.toBe(placed.requestUuid);
    expect(call.requests[0]).toMatchObject({
      action: 'create',
      body: { machine_detection: 'true', to: '15550100' },
    });
    // Nobody answers calls placed on this API alone: the call waits to ring.
    expect(await plivo().status(call.callSid)).toMatchObject({ status: 'queued' });
    expect(await plivo().queuedStatus(placed.requestUuid)).toMatchObject({ status: 'queued' });
    expect(await plivo().cancelRequest(placed.requestUuid)).toBe(true);
    expect(await plivo().status(call.callSid)).toMatchObject({
      status: 'canceled',
      carrierStatus: 'CANCEL',
    });
  });

  it('refuses credentials for another account', async () => {
    const res = await fetch(`${sim.url}/v1/Account/${AUTH_ID}/Call/${UUID}/`, {
      method: 'DELETE',
      headers: { authorization: `Basic ${Buffer.from('MAOTHER0000000000000:t').toString('base64')}` },
    });
    expect(res.status).toBe(401);
    const none = await fetch(`${sim.url}/v1/Account/${AUTH_ID}/Call/${UUID}/`, { method: 'DELETE' });
    expect(none.status).toBe(401);
    expect(sim.calls.size).toBe(0);
  });
});

describe('simulated carrier API: the request hook', () => {
  it('reports every well-formed request, answered or refused, before its answer', async () => {
    const seen: Array<{ method: string; path: string }> = [];
    const hooked = await startSimulatedCarrierApi({ onRequest: (request) => seen.push(request) });
    try {
      expect((await fetch(`${hooked.url}/2010-04-01/Accounts/ACx/Calls/CA1.json`)).status).toBe(401);
      expect((await fetch(`${hooked.url}/sim/calls`)).status).toBe(200);
      expect((await fetch(`${hooked.url}/nowhere`, { method: 'POST' })).status).toBe(404);
      expect(seen).toEqual([
        { method: 'GET', path: '/2010-04-01/Accounts/ACx/Calls/CA1.json' },
        { method: 'GET', path: '/sim/calls' },
        { method: 'POST', path: '/nowhere' },
      ]);
    } finally {
      await hooked.close();
    }
  });
});
