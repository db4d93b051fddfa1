// Every control action leaves one audit entry with the key's name, its role, the action and its
// target; a refused action leaves none; GET /v1/audit pages them newest first, for admins only.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import type { CarrierStreamClient } from '../helpers/twilio-carrier.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, createKey, signIn } from './access-helpers.js';
import { liveTwilioCall } from '../helpers/live-call.js';

let agent: FakeAgent;
let server: TestServer;
const streams: CarrierStreamClient[] = [];

beforeEach(async () => {
  agent = await startFakeAgent({ autoApply: true });
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'k', ADMIN_TOKEN });
});
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await server.close();
  await agent.close();
});

interface Entry {
  id: string;
  at: string;
  keyName: string;
  role: string;
  action: string;
  target: string;
  detail?: Record<string, unknown>;
}

async function entries(): Promise<Entry[]> {
  const answer = await call(server, 'GET', '/v1/audit?limit=200', { bearer: ADMIN_TOKEN });
  expect(answer.status).toBe(200);
  return answer.body.entries as Entry[];
}

describe('the audit log', () => {
  it('records a hang-up under the name of the key that asked, and not a refused one', async () => {
    const operator = await createKey(server, 'operator', 'Grace at the desk');
    const { callSid, stream } = await liveTwilioCall(server);
    streams.push(stream);
    const viewer = await createKey(server, 'viewer', 'read only');
    expect((await call(server, 'POST', `/v1/calls/${callSid}/hangup`, { bearer: viewer })).status).toBe(403);
    expect((await call(server, 'POST', '/v1/calls/CA-missing/hangup', { bearer: operator })).status).toBe(
      404,
    );

    const before = Date.now();
    expect((await call(server, 'POST', `/v1/calls/${callSid}/hangup`, { bearer: operator })).status).toBe(
      200,
    );
    const hangups = (await entries()).filter((e) => e.action === 'call.hangup');
    expect(hangups).toHaveLength(1);
    expect(hangups[0]).toMatchObject({ keyName: 'Grace at the desk', role: 'operator', target: callSid });
    expect(Date.parse(hangups[0]!.at)).toBeGreaterThanOrEqual(before - 1_000);
  });

  it('records campaign, do-not-call and key changes, each with its target, cookie or bearer alike', async () => {
    const admin = await createKey(server, 'admin', 'Ada');
    const { cookie, csrf } = await signIn(server, admin);
    const created = await call(server, 'POST', '/v1/campaigns', { cookie, csrf, body: { name: 'renewals' } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const upload = await call(server, 'POST', `/v1/campaigns/${id}/contacts`, {
      cookie,
      csrf,
      body: [{ phone: '+12125550100' }, { phone: 'nope' }],
    });
    expect(upload.body.added).toBe(1);
    expect((await call(server, 'POST', `/v1/campaigns/${id}/cancel`, { cookie, csrf })).status).toBe(200);
    // A transition the state forbids is refused, and not recorded.
    expect((await call(server, 'POST', `/v1/campaigns/${id}/pause`, { cookie, csrf })).status).toBe(409);
    expect(
      (await call(server, 'POST', '/v1/dnc', { bearer: admin, body: { numbers: ['+12125550111'] } })).status,
    ).toBe(200);
    expect((await call(server, 'DELETE', '/v1/dnc/%2B12125550111', { bearer: admin })).status).toBe(204);
    const key = await call(server, 'POST', '/v1/keys', {
      bearer: admin,
      body: { name: 'temp', role: 'viewer' },
    });
    expect(
      (await call(server, 'DELETE', `/v1/keys/${key.body.id as string}`, { bearer: admin })).status,
    ).toBe(204);

    const log = (await entries()).reverse();
    const ours = log.filter((e) => e.keyName === 'Ada');
    expect(ours.map((e) => [e.action, e.target])).toEqual([
      ['campaign.create', id],
      ['campaign.contacts', id],
      ['campaign.cancel', id],
      ['dnc.add', '+12125550111'],
      ['dnc.remove', '+12125550111'],
      ['key.create', key.body.id],
      ['key.delete', key.body.id],
    ]);
    expect(ours[1]!.detail).toEqual({ added: 1, rejected: 1 });
    expect(ours[5]!.detail).toEqual({ name: 'temp', role: 'viewer' });
    // The key that made Ada's key was ADMIN_TOKEN.
    expect(log[0]).toMatchObject({ keyName: 'admin-token', role: 'admin', action: 'key.create' });
    // Audit entries never hold a key's secret.
    expect(JSON.stringify(log)).not.toContain(key.body.key as string);
  });

  it('pages newest first and is for admins only', async () => {
    for (const n of [1, 2, 3]) {
      await call(server, 'POST', '/v1/dnc', { bearer: ADMIN_TOKEN, body: { numbers: [`+1212555012${n}`] } });
    }
    const first = await call(server, 'GET', '/v1/audit?limit=2', { bearer: ADMIN_TOKEN });
    expect((first.body.entries as Entry[]).map((e) => e.target)).toEqual(['+12125550123', '+12125550122']);
    const next = await call(server, 'GET', `/v1/audit?limit=2&cursor=${first.body.nextCursor as string}`, {
      bearer: ADMIN_TOKEN,
    });
    expect((next.body.entries as Entry[]).map((e) => e.target)).toEqual(['+12125550121']);
    expect(next.body.nextCursor).toBeNull();
    expect((await call(server, 'GET', '/v1/audit?cursor=zz', { bearer: ADMIN_TOKEN })).status).toBe(400);
    expect((await call(server, 'GET', '/v1/audit?sort=asc', { bearer: ADMIN_TOKEN })).status).toBe(400);
    const operator = await createKey(server, 'operator');
    expect((await call(server, 'GET', '/v1/audit', { bearer: operator })).status).toBe(403);
  });
});
