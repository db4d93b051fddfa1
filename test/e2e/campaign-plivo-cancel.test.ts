// Cancelling a campaign while its Plivo call still rings, over the real process and a simulated
// carrier the test holds (SIM_CARRIER_API_URL), so it can see what the carrier was asked. The
// attempt knows the call only by the request UUID Plivo answered the create request with; the
// cancel reaches the call at the carrier through the request (docs/protocols/plivo.md section 9),
// and the hang-up webhook that follows names the call's CallUUID, which the attempt and its record
// then carry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedCallee } from '../../src/sim/callee/answer.js';
import { SIMULATION_SECRET, simulatedCalleeEnv } from '../helpers/simulation.js';
import type { PlacedSimCall } from '../../src/sim/carrier-api/handler.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-plivo-cancel';
/** The number plan's callee that nobody answers: it rings for 30 s at time scale 1. */
const RINGING = '+12125550185';
let server: ServerProcess;
let carrier: SimulatedCarrierApi;
const placed: PlacedSimCall[] = [];

beforeAll(async () => {
  // It signs with the simulated carrier's own keys, derived from the server's secret, as the
  // server's own simulated carrier would (docs/security.md).
  const callee = simulatedCallee({ env: simulatedCalleeEnv(SIMULATION_SECRET) });
  carrier = await startSimulatedCarrierApi({
    onPlaced: (call, log) => {
      placed.push(call);
      callee(call, log);
    },
  });
  await ensureBuilt();
  server = await spawnServer({
    ADMIN_TOKEN: TOKEN,
    SIM_CARRIER_API_URL: carrier.url,
    STREAM_TOKEN_SECRET: SIMULATION_SECRET,
  });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
  await carrier?.close();
});

async function admin<T>(method: string, path: string, body?: unknown, type = 'application/json'): Promise<T> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': type }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  expect(res.ok, `${method} ${path}: ${res.status} ${text}\n${server.output()}`).toBe(true);
  return JSON.parse(text) as T;
}

interface ContactView {
  state: string;
  outcome: string | null;
  attempts: Array<{ callSid: string | null; outcome: string | null }>;
}

/** Asks until `done` holds for the answer, up to about ten seconds. */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  let value = await read();
  for (let i = 0; i < 100 && !done(value); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}

describe('cancelling a campaign with a ringing Plivo call', () => {
  it('cancels the call at the carrier by its request, then follows it by its CallUUID', async () => {
    const created = await admin<{ id: string }>('POST', '/v1/campaigns', {
      name: 'plivo cancel',
      carrier: 'plivo',
    });
    const path = `/v1/campaigns/${created.id}`;
    await admin('POST', `${path}/contacts`, `phone\n${RINGING}\n`, 'text/csv');
    await admin('POST', `${path}/start`);
    const contact = async () =>
      (await admin<{ contacts: ContactView[] }>('GET', `${path}/contacts?limit=1`)).contacts[0]!;

    const dialing = await until(contact, (c) => c.attempts[0]?.callSid != null);
    expect(placed, server.output()).toHaveLength(1);
    const call = placed[0]!;
    // The attempt holds the request UUID: no webhook has named the call yet.
    expect(call.requestId).toBeDefined();
    expect(call.callSid).not.toBe(call.requestId);
    expect(dialing.attempts[0]!.callSid).toBe(call.requestId);
    expect(carrier.calls.get(call.callSid)).toMatchObject({ state: 'ringing' });

    await admin('POST', `${path}/cancel`);
    const ended = await carrier.calls.waitFor(call.callSid, (c) => c.state === 'ended', 10_000);
    expect(ended, server.output()).toMatchObject({ state: 'ended', status: 'canceled' });
    expect(ended!.requests.map((r) => r.action)).toEqual(['create', 'cancel']);

    // Plivo's hang-up webhook names the CallUUID: the attempt ends under it, as does its record.
    const done = await until(contact, (c) => c.state === 'done');
    expect(done.attempts[0], server.output()).toMatchObject({ callSid: call.callSid, outcome: 'cancelled' });
    const record = await admin<{ callSid: string; endReason: string }>('GET', `/v1/calls/${call.callSid}`);
    expect(record).toMatchObject({ callSid: call.callSid, endReason: 'carrier_canceled' });
    expect(server.errorLogs().count, server.errorLogs().first.join('\n')).toBe(0);
  }, 60_000);
});
