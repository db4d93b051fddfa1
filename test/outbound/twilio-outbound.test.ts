// Outbound calls through Twilio's REST API, against a fake of it: what `POST /v1/calls` asks Twilio
// for (the voice webhook, status callbacks, asynchronous detection with message end, the sealed
// context in each URL), the status and detection callbacks signed as Twilio signs them, every
// malformed request refused with a clear 400, admission, and a cancelled campaign hanging up its
// live calls through the carrier's API.
import twilio from 'twilio';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueContextRef, outboundContexts } from '../../src/call/outbound/outbound-context.js';
import { startFakeTwilioApi, type FakeTwilioApi } from '../helpers/fake-twilio-api.js';
import { startServer, type TestServer } from '../helpers/server.js';

const TOKEN = 'admin-token-for-outbound-tests';
const AUTH_TOKEN = 'twilio-auth-token-for-tests-0001';
const ACCOUNT = 'AC00000000000000000000000000000001';
let api: FakeTwilioApi;
let server: TestServer;

beforeEach(async () => {
  api = await startFakeTwilioApi();
  server = await startServer({
    AGENT_URL: 'ws://127.0.0.1:9',
    AGENT_API_KEY: 'test-key',
    ADMIN_TOKEN: TOKEN,
    TWILIO_ACCOUNT_SID: ACCOUNT,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_API_URL: api.url,
  });
});
afterEach(async () => {
  await server?.close();
  await api?.close();
});

const admin = (path: string, body: unknown, method = 'POST') =>
  fetch(`${server.baseUrl}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Posts a form to one of our Twilio routes, signed over the full URL as Twilio signs it. */
function twilioPost(url: string, params: Record<string, string>) {
  const path = url.slice(server.config.publicUrl.length);
  return fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(AUTH_TOKEN, url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
}

async function placeOne(body: Record<string, unknown>) {
  const res = await admin('/calls', body);
  expect(res.status, await res.clone().text()).toBe(201);
  const placed = (await res.json()) as { callSid: string };
  const create = await api.waitFor((r) => r.path.endsWith('/Calls.json'));
  return { placed, create };
}

describe('POST /v1/calls through Twilio', () => {
  it('creates the call with our voice webhook, status callbacks and detection, each carrying the sealed context', async () => {
    const { placed, create } = await placeOne({
      to: '+12125550150',
      from: '+12125550199',
      variables: { name: 'Ada' },
      amd: { mode: 'voicemail', voicemail: { text: 'Hi {{name}}, call us back.' } },
    });
    expect(placed.callSid).toMatch(/^CA\d{32}$/);
    expect(create.path).toBe(`/2010-04-01/Accounts/${ACCOUNT}/Calls.json`);
    expect(create.authorization).toBe(`Basic ${Buffer.from(`${ACCOUNT}:${AUTH_TOKEN}`).toString('base64')}`);
    const { form } = create;
    expect(form).toMatchObject({
      To: '+12125550150',
      From: '+12125550199',
      Method: 'POST',
      MachineDetection: 'DetectMessageEnd',
      AsyncAmd: 'true',
      StatusCallbackMethod: 'POST',
    });
    const base = server.config.publicUrl;
    // Only an opaque reference rides in the URLs: the context stays in the store.
    const REF = '(r1\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{22})$';
    expect(form.Url).toMatch(new RegExp(`^${base}/carriers/twilio/voice\\?ctx=${REF}`));
    expect(form.StatusCallback).toMatch(new RegExp(`^${base}/carriers/twilio/status\\?ctx=${REF}`));
    expect(form.AsyncAmdStatusCallback).toMatch(new RegExp(`^${base}/carriers/twilio/amd\\?ctx=${REF}`));
    expect(JSON.stringify(form)).not.toContain('Ada');
    const context = await outboundContexts(server.config.streamTokenSecret, server.store).resolve(
      new URL(form.Url!).searchParams.get('ctx'),
      'twilio',
    );
    expect(context).toEqual({
      attemptId: null,
      campaignId: null,
      contact: null,
      profile: 'default',
      variables: { name: 'Ada' },
      amd: { mode: 'voicemail', voicemailText: 'Hi Ada, call us back.', voicemailAudioUrl: null },
    });
  });

  it('asks for no detection when none is wanted', async () => {
    const { create } = await placeOne({ to: '+12125550100' });
    expect(create.form.MachineDetection).toBeUndefined();
    expect(create.form.AsyncAmdStatusCallback).toBeUndefined();
    // With no `from`, the number this server answers is the caller ID.
    expect(create.form.From).toBe(Object.keys(server.config.numbers.routes)[0]);
  });

  it.each([
    [[], /JSON object/],
    [{ to: '12345' }, /^to: /],
    [{ to: '+12125550100', extra: 1 }, /unknown field "extra"/],
    [{ to: '+12125550100', profile: 'nope' }, /profile must be one of/],
    [{ to: '+12125550100', carrier: 'telnyx' }, /carrier must be one of: twilio/],
    [{ to: '+12125550100', variables: ['a'] }, /variables must be an object/],
    [{ to: '+12125550100', variables: { 'bad name': 'x' } }, /a name must be letters/],
    [{ to: '+12125550100', amd: { mode: 'maybe' } }, /amd.mode must be/],
    [
      { to: '+12125550100', amd: { mode: 'voicemail' } },
      /amd.voicemail must be \{"text": …\} or \{"audioUrl"/,
    ],
    [{ to: '+12125550100', amd: { mode: 'voicemail', voicemail: {} } }, /needs a text .* or an audioUrl/],
    [{ to: '+12125550100', amd: { mode: 'voicemail', voicemail: 'hi' } }, /amd.voicemail must be/],
    [
      {
        to: '+12125550100',
        amd: { mode: 'voicemail', voicemail: { text: ' ', audioUrl: 'https://a.example/v.wav' } },
      },
      /needs a text .* or an audioUrl/,
    ],
    [
      { to: '+12125550100', amd: { mode: 'voicemail', voicemail: { audioUrl: 'ftp://a.example/v.wav' } } },
      /amd.voicemail.audioUrl must be an http or https URL/,
    ],
    [
      { to: '+12125550100', amd: { mode: 'voicemail', voicemail: { audioUrl: 'not a url' } } },
      /amd.voicemail.audioUrl must be an http or https URL/,
    ],
    [
      { to: '+12125550100', amd: { mode: 'voicemail', voicemail: { audioUrl: 42 } } },
      /amd.voicemail.audioUrl must be an http or https URL/,
    ],
    [
      {
        to: '+12125550100',
        amd: { mode: 'voicemail', voicemail: { audioUrl: `https://a.example/${'v'.repeat(1000)}.wav` } },
      },
      /amd.voicemail.audioUrl must be at most 1000 characters/,
    ],
    [
      {
        to: '+12125550100',
        amd: { mode: 'voicemail', voicemail: { audioUrl: 'https://me:secret@a.example/v.wav' } },
      },
      /must not hold a user name or password/,
    ],
    [
      { to: '+12125550100', amd: { mode: 'voicemail', voicemail: { url: 'https://a.example' } } },
      /unknown field "url"/,
    ],
    [
      { to: '+12125550100', amd: { mode: 'hangup', voicemail: { text: 'hi' } } },
      /only used with mode voicemail/,
    ],
    [{ to: '+12125550100', amd: { mode: 'voicemail', beep: true } }, /amd: unknown field "beep"/],
    [
      { to: '+12125550100', amd: { mode: 'voicemail', voicemail: { text: 'Hi {{name}}' } } },
      /no value for \{\{name\}\}/,
    ],
  ])('refuses %j with a 400 that says why, placing no call', async (body, message) => {
    const res = await admin('/calls', body);
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    expect(error.message).toMatch(message);
    expect(api.requests).toEqual([]);
  });

  it('counts against admission: a draining instance places no call', async () => {
    server.app.callbridge.draining = true;
    const res = await admin('/calls', { to: '+12125550100' });
    expect(res.status).toBe(503);
    expect(api.requests).toEqual([]);
  });

  it('needs the admin token', async () => {
    const res = await fetch(`${server.baseUrl}/v1/calls`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"to":"+12125550100"}',
    });
    expect(res.status).toBe(401);
  });
});

describe("Twilio's callbacks for outbound calls", () => {
  it('records a call that was never answered with the carrier status and why', async () => {
    const { placed, create } = await placeOne({ to: '+12125550172' });
    const res = await twilioPost(create.form.StatusCallback!, {
      CallSid: placed.callSid,
      CallStatus: 'busy',
      From: '+15550100',
      To: '+12125550172',
      SipResponseCode: '486',
    });
    expect(res.status).toBe(204);
    let record = await server.store.getCallRecord(placed.callSid);
    for (let i = 0; i < 50 && record === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      record = await server.store.getCallRecord(placed.callSid);
    }
    expect(record).toMatchObject({
      direction: 'outbound',
      to: '+12125550172',
      endReason: 'carrier_busy',
      carrierStatus: { status: 'busy', reason: 'carrier status busy (SIP 486)' },
    });
  });

  it('refuses a callback whose context was forged or tampered with, and one unsigned', async () => {
    const { placed, create } = await placeOne({ to: '+12125550172' });
    const forged = issueContextRef('another-secret', 'twilio').ref;
    const url = create.form.StatusCallback!.replace(/ctx=[^&]+/, `ctx=${forged}`);
    const params = { CallSid: placed.callSid, CallStatus: 'busy' };
    const res = await twilioPost(url, params);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe(
      'the call context in this URL is not valid',
    );
    const unsigned = await fetch(
      `${server.baseUrl}${create.form.StatusCallback!.slice(server.config.publicUrl.length)}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(params).toString(),
      },
    );
    expect(unsigned.status).toBe(403);
    expect(await server.store.getCallRecord(placed.callSid)).toBeNull();
  });

  it('takes each detection verdict Twilio gives, and refuses what it does not', async () => {
    const { placed, create } = await placeOne({ to: '+12125550150', amd: { mode: 'hangup' } });
    const amd = create.form.AsyncAmdStatusCallback!;
    for (const answeredBy of [
      'human',
      'machine_start',
      'machine_end_beep',
      'machine_end_silence',
      'fax',
      'unknown',
    ]) {
      const res = await twilioPost(amd, {
        CallSid: placed.callSid,
        AnsweredBy: answeredBy,
        MachineDetectionDuration: '2100',
      });
      expect(res.status, answeredBy).toBe(204);
    }
    expect((await twilioPost(amd, { CallSid: placed.callSid, AnsweredBy: 'robot' })).status).toBe(400);
    expect((await twilioPost(amd, { CallSid: 'x', AnsweredBy: 'human' })).status).toBe(400);
  });
});

describe('a cancelled campaign', () => {
  it('hangs up its live calls through the carrier API', async () => {
    const created = await admin('/campaigns', {
      name: 'cancel-me',
      pacing: { callsPerSecond: 10, maxConcurrent: 5 },
    });
    const { id } = (await created.json()) as { id: string };
    const csv = 'phone\n+12125550100\n+12125550101\n';
    await fetch(`${server.baseUrl}/v1/campaigns/${id}/contacts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'text/csv' },
      body: csv,
    });
    expect((await admin(`/campaigns/${id}/start`, {})).status).toBe(200);
    // Both calls are placed; nobody answers them in this fake, so they stay live.
    await api.waitFor((r) => r.path.endsWith('/Calls.json') && r.form.To === '+12125550101');
    await api.waitFor((r) => r.path.endsWith('/Calls.json') && r.form.To === '+12125550100');
    const sids: string[] = [];
    for (let i = 0; i < 100 && sids.length < 2; i++) {
      sids.splice(
        0,
        sids.length,
        ...(await server.store.openAttempts(id)).flatMap((a) => (a.callSid ? [a.callSid] : [])),
      );
      if (sids.length < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect((await admin(`/campaigns/${id}/cancel`, {})).status).toBe(200);
    for (const sid of sids) {
      const hangup = await api.waitFor((r) => r.path.endsWith(`/Calls/${sid}.json`));
      expect(hangup.form).toEqual({ Status: 'completed' });
    }
  });
});
