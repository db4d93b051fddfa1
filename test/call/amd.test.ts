// Answering-machine detection on outbound calls, through real sockets: the server places each call
// with the simulated carrier API, whose callee answers as the number plan says and posts the
// verdict; the built-in local agent speaks. The agent never talks over a voicemail greeting; on a
// person it speaks at once; on a machine the voicemail plays after the beep, is heard to its end,
// and the call hangs up; an unsure verdict is a person.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalAgent, type LocalAgent } from '../../src/sim/agent/server.js';
import { type SimCalleeResult, simulatedCallee } from '../../src/sim/callee/answer.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../src/sim/carrier-api/server.js';
import type { CallRecord } from '../../src/store/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';

const TOKEN = 'admin-token-for-amd-tests';
let agent: LocalAgent;
let sim: SimulatedCarrierApi;
let server: TestServer;
const ended = new Map<string, (result: SimCalleeResult) => void>();

beforeAll(async () => {
  agent = await startLocalAgent({ apiKeys: ['local'] });
  sim = await startSimulatedCarrierApi({
    onPlaced: simulatedCallee({
      timeScale: 0.1,
      onCallEnded: (result) => ended.get(result.callSid)?.(result),
    }),
  });
  server = await startServer(
    { AGENT_URL: agent.url, AGENT_API_KEY: 'local', ADMIN_TOKEN: TOKEN },
    { simulatedCarrierApiUrl: sim.url },
  );
});

afterAll(async () => {
  await server?.close();
  await sim?.close();
  await agent?.close();
});

/** Places one call with POST /v1/calls; resolves once the callee hung up and the record is saved. */
async function call(body: Record<string, unknown>): Promise<{ callee: SimCalleeResult; record: CallRecord }> {
  const res = await fetch(`${server.baseUrl}/v1/calls`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const placed = (await res.json()) as { callSid: string };
  expect(res.status, JSON.stringify(placed)).toBe(201);
  const callee = await new Promise<SimCalleeResult>((resolve) => ended.set(placed.callSid, resolve));
  let record: CallRecord | null = null;
  for (let i = 0; i < 100 && record === null; i++) {
    record = await server.store.getCallRecord(placed.callSid);
    if (record === null) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { callee, record: record! };
}

const VOICEMAIL = {
  mode: 'voicemail',
  voicemail: { text: 'Hi {{name}}, this is Example Dental. Please call us back.' },
};

describe('answering-machine detection', () => {
  it('a person: the agent speaks at once, and the wait is measured', async () => {
    const { callee, record } = await call({ to: '+12125550101', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('human');
    expect(callee.heard.length).toBeGreaterThan(0);
    expect(record.outbound).toMatchObject({ answeredBy: 'human', amdVerdict: 'human', campaign: null });
    expect(record.turns[0]).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^Thank you for calling/),
    });
    expect(record.turns[0]!.heardMs).toBeGreaterThan(0);
    expect(record.endReason).toBe('caller_hangup');
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/callbridge_amd_verdicts_total\{[^}]*verdict="human"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/callbridge_amd_human_wait_seconds_count\{[^}]*carrier="twilio"[^}]*\} [1-9]/);
  }, 30_000);

  it('a machine with a beep: the voicemail is heard to its end after the beep, then the call hangs up', async () => {
    const { callee, record } = await call({ to: '+12125550150', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('machine_end_beep');
    expect(record.endReason).toBe('voicemail_left');
    expect(record.outbound).toMatchObject({ answeredBy: 'machine', amdVerdict: 'machine_end_beep' });
    // Only the message, its placeholder filled: the greeting the agent had ready was never played.
    expect(record.turns).toEqual([
      expect.objectContaining({
        role: 'assistant',
        content: 'Hi Ada, this is Example Dental. Please call us back.',
      }),
    ]);
    const message = record.turns[0]!;
    expect(message.heardMs).toBe(message.sentMs);
    // What the machine recorded is the message, all of it, and nothing else (8 bytes per ms).
    expect(Math.abs(callee.heard.length / 8 - message.sentMs!)).toBeLessThan(100);
  }, 30_000);

  it('a machine in hang-up mode: the call ends as `machine` and the machine hears nothing', async () => {
    const { callee, record } = await call({ to: '+12125550155', amd: { mode: 'hangup' } });
    expect(record.endReason).toBe('machine');
    expect(record.turns).toEqual([]);
    expect(callee.heard.length).toBe(0);
  }, 30_000);

  it('an unsure verdict is a person: the agent speaks', async () => {
    const { callee, record } = await call({ to: '+12125550142', amd: VOICEMAIL, variables: { name: 'Ada' } });
    expect(callee.verdict).toBe('unknown');
    expect(record.outbound).toMatchObject({ answeredBy: 'unknown' });
    expect(record.endReason).not.toBe('machine');
    expect(record.turns[0]).toMatchObject({
      role: 'assistant',
      content: expect.stringMatching(/^Thank you for calling/),
    });
    expect(callee.heard.length).toBeGreaterThan(0);
  }, 30_000);

  it('without detection the agent speaks as soon as the call is answered, and no verdict is asked for', async () => {
    const { callee, record } = await call({ to: '+12125550100' });
    expect(callee.verdict).toBeNull();
    expect(record.outbound).toMatchObject({ answeredBy: null, amdVerdict: null });
    expect(callee.heard.length).toBeGreaterThan(0);
  }, 30_000);
});
