// Outbound calls through Plivo's REST client with real credentials, against the simulated Plivo
// API standing in for api.plivo.com (PLIVO_API_URL): every webhook the simulated carrier posts
// (answer, hang-up, machine detection) is signed with X-Plivo-Signature-V3 and verified by the
// server, the sealed context in each URL's query included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgent, type LocalAgent } from '../../../src/sim/agent/server.js';
import { type SimCalleeResult, simulatedCallee } from '../../../src/sim/callee/answer.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';
import type { CallRecord } from '../../../src/store/call-record.js';
import { startServer, type TestServer } from '../../helpers/server.js';

const TOKEN = 'admin-token-for-signed-plivo';
const AUTH_ID = 'MA0000000000000000AB';
const AUTH_TOKEN = 'plivo-auth-token-for-signed-outbound';
let agent: LocalAgent;
let sim: SimulatedCarrierApi;
let server: TestServer;
const ended = new Map<string, (result: SimCalleeResult) => void>();

beforeAll(async () => {
  agent = await startLocalAgent({ apiKeys: ['local'] });
  sim = await startSimulatedCarrierApi({
    onPlaced: simulatedCallee({
      timeScale: 0.1,
      env: { PLIVO_AUTH_TOKEN: AUTH_TOKEN },
      // The server knows a placed call by the request UUID Plivo answered with; the callee by its CallUUID.
      onCallEnded: (result) => ended.get(sim.calls.get(result.callSid)?.requestId ?? '')?.(result),
    }),
  });
  server = await startServer({
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'local',
    ADMIN_TOKEN: TOKEN,
    PLIVO_AUTH_ID: AUTH_ID,
    PLIVO_AUTH_TOKEN: AUTH_TOKEN,
    PLIVO_API_URL: sim.url,
  });
});

afterAll(async () => {
  await server?.close();
  await sim?.close();
  await agent?.close();
});

async function call(body: Record<string, unknown>): Promise<{ callee: SimCalleeResult; record: CallRecord }> {
  const res = await fetch(`${server.baseUrl}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ carrier: 'plivo', from: '+12125550199', ...body }),
  });
  const placed = (await res.json()) as { callSid: string; carrier: string };
  expect(res.status, JSON.stringify(placed)).toBe(201);
  expect(placed.carrier).toBe('plivo');
  const callee = await new Promise<SimCalleeResult>((resolve) => ended.set(placed.callSid, resolve));
  // The record is kept under the CallUUID the webhooks brought.
  expect(callee.callSid).not.toBe(placed.callSid);
  let record: CallRecord | null = null;
  for (let i = 0; i < 100 && record === null; i++) {
    record = await server.store.getCallRecord(callee.callSid);
    if (record === null) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { callee, record: record! };
}

describe('outbound calls through Plivo, signed', () => {
  it('records a busy line from the signed hang-up URL', async () => {
    const { callee, record } = await call({ to: '+12125550172' });
    expect(callee.status).toBe('busy');
    expect(record).toMatchObject({
      carrier: 'plivo',
      direction: 'outbound',
      endReason: 'carrier_busy',
      carrierStatus: { status: 'busy', reason: 'carrier status busy (Plivo Busy Line)' },
    });
  });

  it('bridges a person once the signed answer URL is fetched, the signed verdict releasing the agent', async () => {
    const { callee, record } = await call({
      to: '+12125550100',
      amd: { mode: 'voicemail', voicemail: { text: 'Please call us back.' } },
    });
    expect(callee.verdict).toBe('human');
    expect(callee.heard.length).toBeGreaterThan(0);
    expect(record).toMatchObject({ carrier: 'plivo', direction: 'outbound' });
    expect(record.outbound).toMatchObject({ answeredBy: 'human', amdVerdict: 'human' });
    expect(record.turns[0]).toMatchObject({ role: 'assistant' });
  }, 30_000);
});
