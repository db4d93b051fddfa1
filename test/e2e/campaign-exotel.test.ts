// A campaign through Exotel with no Exotel account, over the real process: the server places each
// call with the built-in simulated Exotel API (`Calls/connect`), whose callee runs the flow's
// Voicebot applet against the server's applet URL; the status callback, read back from the API,
// ends the calls never answered. Exotel has no answering-machine detection, so a campaign asking
// for it is refused at creation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { adminRequest } from '../helpers/admin-request.js';
import { ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const TOKEN = 'admin-token-for-exotel-campaign-e2e';
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  // The simulated Exotel calls from loopback: named as Exotel's network, its requests are verified
  // (Exotel signs nothing; docs/security.md).
  server = await spawnServer({
    ADMIN_TOKEN: TOKEN,
    SIM_CALLEE_SPEEDUP: '10',
    EXOTEL_ALLOWED_CIDRS: '127.0.0.1/32,::1/128',
  });
}, 60_000);

afterAll(async () => {
  await server?.dispose();
});

function admin(path: string, body?: unknown, type?: string) {
  return adminRequest(server.baseUrl, TOKEN, path, body, type);
}

interface ContactView {
  phone: string;
  state: string;
  outcome: string | null;
  attempts: Array<{ callSid: string | null; reason: string | null }>;
}

describe('a simulated Exotel campaign end to end', () => {
  it('refuses a campaign through Exotel with answering-machine detection on', async () => {
    const res = await admin('/campaigns', {
      name: 'exotel with detection',
      carrier: 'exotel',
      amd: { mode: 'voicemail', voicemail: { text: 'Hi' } },
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { message: string } };
    expect(error.message).toMatch(/amd\.mode: exotel has no answering-machine detection/);
    const single = await admin('/calls', { to: '+12125550100', carrier: 'exotel', amd: { mode: 'hangup' } });
    expect(single.status).toBe(400);
  });

  it('runs a person, a voicemail, a busy line and an unanswered call to their outcomes', async () => {
    const created = await admin('/campaigns', {
      name: 'exotel',
      carrier: 'exotel',
      pacing: { callsPerSecond: 5, maxConcurrent: 5 },
      retry: { maxAttempts: 1 },
      amd: { mode: 'off' },
    });
    const campaign = (await created.json()) as { id: string };
    expect(created.status, JSON.stringify(campaign)).toBe(201);
    const phones = ['+12125550100', '+12125550150', '+12125550172', '+12125550183'];
    await admin(`/campaigns/${campaign.id}/contacts`, `phone\n${phones.join('\n')}\n`, 'text/csv');
    expect((await admin(`/campaigns/${campaign.id}/start`, {})).status).toBe(200);
    let contacts: ContactView[] = [];
    for (let i = 0; i < 600 && !(contacts.length === 4 && contacts.every((c) => c.state === 'done')); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      contacts = (
        (await (await admin(`/campaigns/${campaign.id}/contacts`)).json()) as { contacts: ContactView[] }
      ).contacts;
    }
    expect(Object.fromEntries(contacts.map((c) => [c.phone, c.outcome])), server.output()).toEqual({
      '+12125550100': 'completed',
      // No detection at Exotel: a voicemail is a conversation the agent has with a machine.
      '+12125550150': 'completed',
      '+12125550172': 'busy',
      '+12125550183': 'no_answer',
    });
    const person = contacts.find((c) => c.phone === '+12125550100')!;
    const record = (await (await admin(`/calls/${person.attempts[0]!.callSid}`)).json()) as CallRecord;
    expect(record).toMatchObject({ carrier: 'exotel', direction: 'outbound', to: '+12125550100' });
    expect(record.outbound).toMatchObject({ campaign: campaign.id, attempt: `${campaign.id}.1.1` });
    // The agent's greeting reached the person over Exotel's stream.
    expect(record.turns[0]).toMatchObject({ role: 'assistant' });
    expect(contacts.find((c) => c.phone === '+12125550172')!.attempts[0]!.reason).toMatch(/busy/);
    expect(server.errorLogs().count, server.errorLogs().first.join('\n')).toBe(0);
  }, 120_000);
});
