// A campaign's whole lifecycle driven by an operator leaves one audit entry per step, in order,
// under the operator's key; and the calls history filters the console uses reach the store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallRecord } from '../../src/store/call-record.js';
import { callRecordFixture } from '../helpers/call-record.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { QuickCarrier } from '../outbound/quick-carrier.js';
import { ADMIN_TOKEN, call, createKey, ENV } from './access-helpers.js';

let server: TestServer;

beforeAll(async () => {
  const carrier = new QuickCarrier();
  server = await startServer(ENV, { originator: carrier, dialerOptions: { idlePollMs: 20 } });
  carrier.dialer = server.app.callbridge.outbound.dialer;
});
afterAll(async () => {
  await server.close();
});

describe('audit of a campaign lifecycle', () => {
  it('records start, pause, resume and cancel with the campaign as target', async () => {
    const operator = await createKey(server, 'operator', 'campaign desk');
    const created = await call(server, 'POST', '/v1/campaigns', {
      bearer: operator,
      body: { name: 'slow', pacing: { callsPerSecond: 0.01 } },
    });
    const id = created.body.id as string;
    await call(server, 'POST', `/v1/campaigns/${id}/contacts`, {
      bearer: operator,
      body: ['+12125550100', '+12125550150', '+12125550175'].map((phone) => ({ phone })),
    });
    for (const action of ['start', 'pause', 'resume', 'cancel']) {
      const answer = await call(server, 'POST', `/v1/campaigns/${id}/${action}`, { bearer: operator });
      expect(answer.status, `${action}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    const audit = await call(server, 'GET', '/v1/audit', { bearer: ADMIN_TOKEN });
    const steps = (audit.body.entries as { action: string; target: string; keyName: string }[])
      .filter((e) => e.keyName === 'campaign desk')
      .reverse()
      .map((e) => `${e.action} ${e.target}`);
    expect(steps).toEqual(
      ['create', 'contacts', 'start', 'pause', 'resume', 'cancel'].map((step) => `campaign.${step} ${id}`),
    );
  });
});

describe('GET /v1/calls filters', () => {
  const record = (callSid: string, extra: Partial<CallRecord>): CallRecord =>
    callRecordFixture(callSid, { from: '+12125550100', to: '+12125550101', durationMs: 60_000, ...extra });

  it('filters by direction, carrier, profile, campaign and number, and refuses malformed ones', async () => {
    await server.store.saveCallRecord(record('CA-f1', {}));
    await server.store.saveCallRecord(
      record('CA-f2', {
        direction: 'outbound',
        carrier: 'telnyx',
        to: '+12125550199',
        outbound: { campaign: 'cmp_f', contact: 1, attempt: 'a', answeredBy: null, amdVerdict: null },
      }),
    );
    const sids = async (query: string) => {
      const answer = await call(server, 'GET', `/v1/calls?${query}`, { bearer: ADMIN_TOKEN });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      return (answer.body.calls as CallRecord[]).map((c) => c.callSid).filter((s) => s.startsWith('CA-f'));
    };
    expect(await sids('direction=outbound')).toEqual(['CA-f2']);
    expect(await sids('carrier=twilio')).toEqual(['CA-f1']);
    expect(await sids('campaign=cmp_f')).toEqual(['CA-f2']);
    expect(await sids('number=%2B12125550199')).toEqual(['CA-f2']);
    expect(await sids('profile=support&number=%2B12125550101')).toEqual(['CA-f1']);
    expect(await sids('number=%2B12125550100')).toEqual(['CA-f2', 'CA-f1']);
    for (const bad of [
      'direction=sideways',
      'number=12125550199',
      'carrier=a%20b',
      'direction=in&direction=out',
    ]) {
      expect((await call(server, 'GET', `/v1/calls?${bad}`, { bearer: ADMIN_TOKEN })).status, bad).toBe(400);
    }
  });
});
