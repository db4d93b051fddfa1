// No carrier is special in production (docs/carriers.md): a deployment with only Telnyx's
// credentials starts and carries Telnyx calls, through the real entry point; the carriers it has no
// credentials for are not served, and their routes refuse every request, naming what to set.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAgent, startFakeAgent } from '../helpers/fake-agent.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../helpers/fake-carrier-api.js';
import { disposeAll, ensureBuilt, type ServerProcess, spawnServer } from '../helpers/server-process.js';
import {
  announceTelnyxCall,
  answerFromRecordedRequests,
  openTelnyxStream,
  type TelnyxAccount,
  telnyxAccount,
} from '../helpers/telnyx-carrier.js';
import { newCallSid, voiceWebhook } from '../helpers/twilio-carrier.js';

let agent: FakeAgent;
let telnyxApi: FakeCarrierApi;
let account: TelnyxAccount;
let server: ServerProcess;

beforeAll(async () => {
  await ensureBuilt();
  agent = await startFakeAgent({ autoApply: true });
  telnyxApi = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
  account = telnyxAccount();
  server = await spawnServer({
    NODE_ENV: 'production',
    AGENT_URL: agent.url,
    AGENT_API_KEY: 'agent-key',
    TELNYX_API_KEY: 'KEY-telnyx-only-production',
    TELNYX_PUBLIC_KEY: account.publicKey,
    TELNYX_CONNECTION_ID: '1293384261075731499',
    TELNYX_API_URL: telnyxApi.url,
  });
}, 120_000);

afterAll(async () => {
  await disposeAll();
  await agent?.close();
  await telnyxApi?.close();
});

describe('a production server with only Telnyx credentials', () => {
  it('starts, and carries a signed Telnyx call to the agent', async () => {
    const announced = await announceTelnyxCall(
      server.baseUrl,
      answerFromRecordedRequests(telnyxApi.requests),
      { kind: 'valid', account },
    );
    expect(announced.status).toBe(200);
    expect(announced.streamUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/media\/telnyx\//);
    const stream = await openTelnyxStream(announced.streamUrl, { callControlId: announced.callControlId });
    stream.start({ clientState: announced.clientState });
    const conn = await agent.nextConnection();
    expect((await conn.waitFor('Settings')).type).toBe('Settings');
    stream.stop();
    await stream.closed;
    expect(server.errorLogs().count).toBe(0);
  });

  it('serves no carrier without credentials: their routes refuse, naming what to set', async () => {
    const before = agent.connections.length;
    const twilio = await voiceWebhook(server.baseUrl, {
      CallSid: newCallSid(),
      From: '+15550100',
      To: '+15550101',
    });
    expect(twilio.status).toBe(403);
    expect(JSON.parse(twilio.body).error).toEqual({
      code: 'CALLBRIDGE_BAD_SIGNATURE',
      message: 'twilio requests are refused: TWILIO_AUTH_TOKEN is not set',
    });
    const plivo = await fetch(`${server.baseUrl}/carriers/plivo/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'CallUUID=abc&From=15550100&To=15550101',
    });
    expect(plivo.status).toBe(403);
    expect(agent.connections).toHaveLength(before);
    expect(server.output()).toContain(
      'TWILIO_AUTH_TOKEN is not set: twilio requests are refused until it is',
    );
  });
});
