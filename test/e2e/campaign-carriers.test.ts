// A small campaign through each carrier that places calls on the built-in simulated carrier API,
// over the real process (README.md, "Run a simulated campaign"): a person, a voicemail with its
// beep, a busy line and one nobody answers, each ending with the outcome the number plan says, and
// the records of the calls naming the carrier.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-carrier-campaigns';
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  // Callees ring and wait ten times less than real phones; their audio still plays in real time.
  // The simulated carrier signs every webhook with its own keys, as the carrier would with its
  // secret: the server trusts those for carriers without credentials (docs/security.md).
  server = await spawnServer({ ADMIN_TOKEN: TOKEN, SIM_CALLEE_SPEEDUP: '10' });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
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
  phone: string;
  state: string;
  outcome: string | null;
  attempts: Array<{ callSid: string | null; durationMs: number | null }>;
}

async function resultsCsv(campaignPath: string): Promise<Array<Record<string, string>>> {
  const res = await fetch(`${server.baseUrl}${campaignPath}/results.csv`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(res.status).toBe(200);
  // No cell of these contacts holds a comma or a quote.
  const [header, ...rows] = (await res.text())
    .trim()
    .split('\n')
    .map((line) => line.split(','));
  return rows.map((cells) => Object.fromEntries(header!.map((name, i) => [name, cells[i] ?? ''])));
}

const CONTACTS = {
  '+12125550100': 'completed',
  '+12125550150': 'voicemail_left',
  '+12125550172': 'busy',
  '+12125550183': 'no_answer',
};

// Plivo reports machine or not, and the greeting's end is heard in the audio; Vonage reports the beep.
describe.each([
  ['plivo', 'greeting_silent'],
  ['vonage', 'beep_start'],
])('a simulated campaign through %s', (carrier, voicemailVerdict) => {
  it('ends each call with the outcome its callee gives', async () => {
    const created = await admin<{ id: string }>('POST', '/v1/campaigns', {
      name: `${carrier} campaign`,
      carrier,
      pacing: { callsPerSecond: 10, maxConcurrent: 4 },
      amd: {
        mode: 'voicemail',
        voicemail: { text: 'Hello, this is an automated call. Please call us back.' },
      },
    });
    const path = `/v1/campaigns/${created.id}`;
    await admin('POST', `${path}/contacts`, `phone\n${Object.keys(CONTACTS).join('\n')}\n`, 'text/csv');
    await admin('POST', `${path}/start`);
    let state = '';
    for (let i = 0; i < 600 && state !== 'completed'; i++) {
      ({ state } = await admin<{ state: string }>('GET', path));
      if (state !== 'completed') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(state, server.output()).toBe('completed');
    const { contacts } = await admin<{ contacts: ContactView[] }>('GET', `${path}/contacts?limit=10`);
    expect(Object.fromEntries(contacts.map((c) => [c.phone, c.outcome]))).toEqual(CONTACTS);

    const { calls } = await admin<{ calls: CallRecord[] }>('GET', '/v1/calls?limit=50');
    const mine = calls.filter((call) => call.outbound?.campaign === created.id);
    expect(mine.every((call) => call.carrier === carrier)).toBe(true);
    const person = mine.find((call) => call.to === '+12125550100')!;
    expect(person).toMatchObject({ direction: 'outbound', endReason: 'caller_hangup' });
    expect(person.outbound).toMatchObject({ answeredBy: 'human' });
    expect(person.turns[0]).toMatchObject({ role: 'assistant', interrupted: false });
    const voicemail = mine.find((call) => call.to === '+12125550150')!;
    expect(voicemail.endReason).toBe('voicemail_left');
    // The message was heard to its end, and nothing of the agent before it.
    expect(voicemail.outbound).toMatchObject({ answeredBy: 'machine', amdVerdict: voicemailVerdict });
    expect(voicemail.turns).toHaveLength(1);
    expect(voicemail.turns[0]!.content).toMatch(/^Hello, this is an automated call/);
    expect(voicemail.turns[0]!.heardMs).toBe(voicemail.turns[0]!.sentMs);
    const busy = mine.find((call) => call.to === '+12125550172')!;
    expect(busy).toMatchObject({ endReason: 'carrier_busy', carrierStatus: { status: 'busy' } });

    // Each attempt follows its call by the carrier's own id (for Plivo, the CallUUID its webhooks
    // brought, not the request UUID its create request was answered with): it names the call's
    // record, and the results carry the record's duration.
    const rows = await resultsCsv(path);
    for (const contact of contacts) {
      const callSid = contact.attempts.at(-1)?.callSid;
      const record = mine.find((call) => call.callSid === callSid);
      expect(record, `${contact.phone}: no record for call ${callSid}`).toMatchObject({ to: contact.phone });
      const row = rows.find((r) => r.phone === contact.phone);
      expect(row?.duration_seconds).toBe(String(Math.round(record!.durationMs / 1000)));
    }
    for (const phone of ['+12125550100', '+12125550150']) {
      expect(Number(rows.find((r) => r.phone === phone)?.duration_seconds)).toBeGreaterThan(0);
    }
    expect(server.errorLogs().count, server.errorLogs().first.join('\n')).toBe(0);
  }, 90_000);
});
