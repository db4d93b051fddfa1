// A small campaign placed through Telnyx with no Telnyx account, over the real process: the server
// places its calls on the built-in simulated carrier's Telnyx API, whose callees ring, answer or
// not, and post Telnyx's webhooks signed with Ed25519 with the simulation's own key, which the server
// trusts for a carrier without credentials (docs/security.md); answered calls are bridged through
// Telnyx's media stream. A person, a
// voicemail with its beep, a busy line and a phone nobody answers each end as they should.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-telnyx-campaign-e2e';
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  // Callees ring and wait ten times less than real phones; their audio still plays in real time.
  server = await spawnServer({
    ADMIN_TOKEN: TOKEN,
    SIM_CALLEE_SPEEDUP: '10',
  });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
});

async function admin(method: string, path: string, body?: string, type = 'application/json') {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body === undefined ? {} : { 'content-type': type }),
    },
    body,
  });
  const text = await res.text();
  expect(res.ok, `${method} ${path}: ${res.status} ${text}`).toBe(true);
  return text;
}

describe('a simulated campaign through Telnyx', () => {
  it('reaches a person, leaves a voicemail after the beep, and reports busy and no answer', async () => {
    const created = JSON.parse(
      await admin(
        'POST',
        '/v1/campaigns',
        JSON.stringify({
          name: 'telnyx-e2e',
          carrier: 'telnyx',
          retry: { maxAttempts: 1 },
          amd: {
            mode: 'voicemail',
            voicemail: { text: 'Hello, this is an automated call. Please call us back.' },
          },
        }),
      ),
    ) as { id: string };
    const path = `/v1/campaigns/${created.id}`;
    const contacts = ['phone', '+12125550100', '+12125550150', '+12125550172', '+12125550183'].join('\n');
    await admin('POST', `${path}/contacts`, `${contacts}\n`, 'text/csv');
    await admin('POST', `${path}/start`);

    let state = '';
    const deadline = Date.now() + 90_000;
    while (state !== 'completed') {
      expect(Date.now() < deadline, `campaign still ${state}\n${server.output()}`).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 250));
      state = (JSON.parse(await admin('GET', path)) as { state: string }).state;
    }

    const rows = (await admin('GET', `${path}/results.csv`)).trimEnd().split('\n');
    const header = rows[0]!.split(',');
    const outcomeAt = header.indexOf('outcome');
    const outcome = Object.fromEntries(
      rows.slice(1).map((row) => [row.split(',')[0], row.split(',')[outcomeAt]]),
    );
    expect(outcome, server.output()).toEqual({
      '+12125550100': 'completed',
      '+12125550150': 'voicemail_left',
      '+12125550172': 'busy',
      '+12125550183': 'no_answer',
    });

    const page = JSON.parse(await admin('GET', '/v1/calls?limit=50')) as { calls: CallRecord[] };
    const byNumber = new Map(page.calls.map((call) => [call.to, call]));
    const person = byNumber.get('+12125550100')!;
    expect(person).toMatchObject({ carrier: 'telnyx', direction: 'outbound' });
    expect(person.callSid).toMatch(/^v3:sim-/);
    expect(person.outbound).toMatchObject({ answeredBy: 'human', amdVerdict: 'human' });
    // The agent spoke to the person once detection said human.
    expect(person.turns[0]).toMatchObject({ role: 'assistant' });
    const voicemail = byNumber.get('+12125550150')!;
    expect(voicemail).toMatchObject({ carrier: 'telnyx', endReason: 'voicemail_left' });
    expect(voicemail.outbound).toMatchObject({ answeredBy: 'machine', amdVerdict: 'beep_detected' });
    expect(voicemail.turns).toHaveLength(1);
    expect(voicemail.turns[0]!.content).toMatch(/^Hello, this is an automated call/);
    const busy = byNumber.get('+12125550172')!;
    expect(busy).toMatchObject({ carrier: 'telnyx', endReason: 'carrier_busy' });
    expect(busy.carrierStatus).toEqual({
      status: 'busy',
      reason: 'carrier status busy (hangup_cause user_busy)',
    });
    expect(byNumber.get('+12125550183')).toMatchObject({ endReason: 'carrier_no_answer' });
    expect(server.errorLogs().count, server.errorLogs().first.join('\n')).toBe(0);
  }, 120_000);
});
