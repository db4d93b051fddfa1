// The console's event streams: live calls (a snapshot, then each call starting and ending), a live
// call's own events, and a campaign's progress that ends with the campaign.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { type EventReader, readEvents } from '../helpers/sse.js';
import type { CarrierStreamClient } from '../helpers/twilio-carrier.js';
import { ADMIN_TOKEN, call, createKey } from './access-helpers.js';
import { liveTwilioCall } from '../helpers/live-call.js';

let agent: FakeAgent;
let server: TestServer;
const streams: CarrierStreamClient[] = [];
const readers: EventReader[] = [];

beforeEach(async () => {
  agent = await startFakeAgent({ autoApply: true });
  server = await startServer({ AGENT_URL: agent.url, AGENT_API_KEY: 'k', ADMIN_TOKEN });
});
afterEach(async () => {
  for (const reader of readers.splice(0)) reader.close();
  for (const stream of streams.splice(0)) stream.ws.terminate();
  await server.close();
  await agent.close();
});

async function follow(path: string, key: string) {
  const reader = await readEvents(`${server.baseUrl}${path}`, { authorization: `Bearer ${key}` });
  readers.push(reader);
  return reader;
}

describe('GET /v1/calls/live/events', () => {
  it('sends a snapshot, then each call as it starts and as it ends, to every console', async () => {
    const viewer = await createKey(server, 'viewer');
    const before = await liveTwilioCall(server);
    streams.push(before.stream);
    const first = await follow('/v1/calls/live/events', viewer);
    const second = await follow('/v1/calls/live/events', ADMIN_TOKEN);
    expect(first.status).toBe(200);
    await expect.poll(() => first.events[0]?.event).toBe('snapshot');
    expect((first.events[0]!.data.calls as { callSid: string }[]).map((c) => c.callSid)).toEqual([
      before.callSid,
    ]);

    const next = await liveTwilioCall(server);
    streams.push(next.stream);
    for (const reader of [first, second]) {
      await expect
        .poll(() => reader.events.find((e) => e.event === 'started')?.data)
        .toMatchObject({
          callSid: next.callSid,
          direction: 'inbound',
          carrier: 'twilio',
          from: '+15005550006',
        });
    }
    expect(
      (await call(server, 'POST', `/v1/calls/${next.callSid}/hangup`, { bearer: ADMIN_TOKEN })).status,
    ).toBe(200);
    for (const reader of [first, second]) {
      await expect
        .poll(() => reader.events.find((e) => e.event === 'ended')?.data)
        .toEqual({ callSid: next.callSid });
    }
    // One feed serves both consoles: its readers are counted once per instance, not per console.
    expect(server.app.callbridge.fleet.live.followers).toBe(2);
    first.close();
    second.close();
    await expect.poll(() => server.app.callbridge.fleet.live.followers).toBe(0);
  });

  it('needs a key', async () => {
    expect((await call(server, 'GET', '/v1/calls/live/events')).status).toBe(401);
  });
});

describe('GET /v1/calls/:callSid/events', () => {
  it("streams a live call's events until its end", async () => {
    const viewer = await createKey(server, 'viewer');
    const live = await liveTwilioCall(server);
    streams.push(live.stream);
    const reader = await follow(`/v1/calls/${live.callSid}/events`, viewer);
    await expect.poll(() => agent.connections.length).toBe(1);
    agent.connections[0]!.send({ type: 'ConversationText', role: 'user', content: 'where is my order' });
    await expect
      .poll(() => reader.events.find((e) => e.event === 'transcript')?.data)
      .toMatchObject({ role: 'user', content: 'where is my order' });
    await call(server, 'POST', `/v1/calls/${live.callSid}/hangup`, { bearer: ADMIN_TOKEN });
    const all = await reader.done;
    expect(all.at(-1)).toMatchObject({ event: 'end', data: { type: 'end', reason: 'operator_hangup' } });
  });
});

describe('GET /v1/campaigns/:id/events', () => {
  it('sends the progress with its dial rate at once and on each change, and ends with the campaign', async () => {
    const operator = await createKey(server, 'operator');
    const created = await call(server, 'POST', '/v1/campaigns', {
      bearer: operator,
      body: { name: 'watch me' },
    });
    const id = created.body.id as string;
    const reader = await follow(`/v1/campaigns/${id}/events`, operator);
    await expect.poll(() => reader.events.length).toBe(1);
    expect(reader.events[0]).toMatchObject({
      event: 'progress',
      data: { id, state: 'draft', dialRate: 0, progress: { contacts: { total: 0 } } },
    });
    await call(server, 'POST', `/v1/campaigns/${id}/contacts`, {
      bearer: operator,
      body: [{ phone: '+12125550100' }],
    });
    await expect
      .poll(() => reader.events.at(-1)?.data.progress, { timeout: 10_000 })
      .toMatchObject({
        contacts: { total: 1 },
      });
    await call(server, 'POST', `/v1/campaigns/${id}/cancel`, { bearer: operator });
    const all = await reader.done;
    expect(all.at(-1)).toMatchObject({ event: 'progress', data: { state: 'cancelled' } });
    expect((await call(server, 'GET', '/v1/campaigns/cmp_nothing/events', { bearer: operator })).status).toBe(
      404,
    );
  });
});
