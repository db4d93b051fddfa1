// No number the dial policy refuses reaches a carrier, through the real process: premium-rate,
// shared-cost, personal and satellite numbers, emergency numbers and numbers on the do-not-call list
// are refused with 403 CALLBRIDGE_DIAL_BLOCKED and the rule, as single calls, campaign caller IDs,
// campaign contacts (rejected rows) and operator transfers, while an ordinary number is still dialed
// on the simulated carrier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PlacedSimCall } from '../../src/sim/carrier-api/handler.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-dial-policy-e2e';
let sim: SimulatedCarrierApi;
let server: ServerProcess;
const placed: PlacedSimCall[] = [];

beforeAll(async () => {
  await ensureBuilt();
  // The server's calls go to this simulated carrier, which tells the test every call it was asked for.
  sim = await startSimulatedCarrierApi({ onPlaced: (call) => placed.push(call) });
  server = await spawnServer({ ADMIN_TOKEN: TOKEN, SIM_CARRIER_API_URL: sim.url });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
  await sim?.close();
});

interface Answer {
  error: { code: string; message: string };
  id: string;
  callSid: string;
  added: number;
  rejected: Array<{ row: number; reason: string }>;
}

async function admin(path: string, body: unknown, type = 'application/json') {
  const res = await fetch(`${server.baseUrl}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer };
}

async function waitForPlaced(to: string): Promise<PlacedSimCall> {
  for (let i = 0; i < 200; i++) {
    const call = placed.find((c) => c.to === to);
    if (call) return call;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no call to ${to} reached the carrier`);
}

describe('the dial policy through the running server', () => {
  it.each([
    ['+19002345678', /^to: \+19002345678 is a premium-rate number \(DIAL_BLOCKED_TYPES\)$/],
    ['+447012345678', /^to: \+447012345678 is a personal number \(DIAL_BLOCKED_TYPES\)$/],
    ['+448712345678', /^to: \+448712345678 is a (premium-rate|shared-cost) number/],
    ['+449012345678', /^to: \+449012345678 is a premium-rate number/],
    ['+870773111632', /^to: \+870773111632 is a satellite number$/],
    ['+1911', /^to: \+1911 is an emergency number$/],
    ['+44999', /^to: \+44999 is an emergency number$/],
  ])('POST /v1/calls to %s: 403 naming the rule, no call placed', async (to, message) => {
    const answer = await admin('/calls', { to });
    expect(answer.status).toBe(403);
    expect(answer.body.error).toEqual({
      code: 'CALLBRIDGE_DIAL_BLOCKED',
      message: expect.stringMatching(message),
    });
  });

  it('a caller ID the policy refuses is refused too', async () => {
    const answer = await admin('/calls', { to: '+12125550103', from: '+19002345678' });
    expect(answer).toMatchObject({ status: 403, body: { error: { code: 'CALLBRIDGE_DIAL_BLOCKED' } } });
    expect(answer.body.error.message).toMatch(/^from: \+19002345678 is a premium-rate number/);
  });

  it('a number on the do-not-call list is refused as a single call; an ordinary number is dialed', async () => {
    expect((await admin('/dnc', { numbers: ['+12125550101'] })).status).toBe(200);
    const refused = await admin('/calls', { to: '+12125550101' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({
      code: 'CALLBRIDGE_DIAL_BLOCKED',
      message: 'to: +12125550101 is on the do-not-call list',
    });
    const dialed = await admin('/calls', { to: '+12125550100' });
    expect(dialed.status, JSON.stringify(dialed.body)).toBe(201);
    expect((await waitForPlaced('+12125550100')).callSid).toBe(dialed.body.callSid);
  });

  it("refuses a campaign's premium caller ID, and rejects its blocked contacts by row while dialing the rest", async () => {
    const premiumFrom = await admin('/campaigns', {
      name: 'premium from',
      from: ['+12125550199', '+19002345678'],
    });
    expect(premiumFrom.status).toBe(403);
    expect(premiumFrom.body.error).toEqual({
      code: 'CALLBRIDGE_DIAL_BLOCKED',
      message: 'from[1]: +19002345678 is a premium-rate number (DIAL_BLOCKED_TYPES)',
    });

    const created = await admin('/campaigns', { name: 'blocked contacts', retry: { maxAttempts: 1 } });
    expect(created.status).toBe(201);
    const { id } = created.body;
    const csv = ['phone', '+19002345678', '+447012345678', '+870773111632', '+1911', '+12125550102'].join(
      '\n',
    );
    const upload = await admin(`/campaigns/${id}/contacts`, `${csv}\n`, 'text/csv');
    expect(upload.body.added).toBe(1);
    expect(upload.body.rejected).toEqual([
      {
        row: 2,
        reason: 'refused by the dial policy: +19002345678 is a premium-rate number (DIAL_BLOCKED_TYPES)',
      },
      {
        row: 3,
        reason: 'refused by the dial policy: +447012345678 is a personal number (DIAL_BLOCKED_TYPES)',
      },
      { row: 4, reason: 'refused by the dial policy: +870773111632 is a satellite number' },
      { row: 5, reason: 'refused by the dial policy: +1911 is an emergency number' },
    ]);
    expect((await admin(`/campaigns/${id}/start`, {})).status).toBe(200);
    await waitForPlaced('+12125550102');
  });

  it('refuses an operator transfer to a premium number before looking for the call', async () => {
    const answer = await admin('/calls/CA0000000000000000000000000000dead/transfer', { to: '+19002345678' });
    expect(answer.status).toBe(403);
    expect(answer.body.error.code).toBe('CALLBRIDGE_DIAL_BLOCKED');
    const ordinary = await admin('/calls/CA0000000000000000000000000000dead/transfer', {
      to: '+442071234567',
    });
    expect(ordinary.status).toBe(404);
  });

  it('placed nothing but the ordinary numbers', () => {
    expect(placed.map((call) => call.to).sort()).toEqual(['+12125550100', '+12125550102']);
  });
});
