// Telnyx's webhook route on a real Fastify app holding only its plugin, with a fake call intake and
// a fake Telnyx API. Signatures are made with node:crypto in the helper, not with the project's code.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeClientState, encodeClientState } from '../../../src/carriers/telnyx/client-state.js';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
import { type TelnyxRoutesDeps, telnyxRoutes } from '../../../src/carriers/telnyx/routes.js';
import { importTelnyxPublicKeys } from '../../../src/carriers/telnyx/signature.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import {
  callPayload,
  newCallControlId,
  postTelnyxEvent,
  type TelnyxAccount,
  telnyxAccount,
  telnyxEvent,
  telnyxHeaders,
} from '../../helpers/telnyx-carrier.js';

const account: TelnyxAccount = telnyxAccount();

let api: FakeCarrierApi;
let app: CarrierApp | undefined;
let intake: FakeIntake;
let metrics: Metrics;
let logLines: string[];

beforeEach(async () => {
  api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
  intake = createFakeIntake();
  metrics = createMetrics('global');
  logLines = [];
});

afterEach(async () => {
  await app?.close();
  app = undefined;
  await api.close();
});

async function start(overrides: Partial<TelnyxRoutesDeps> = {}): Promise<CarrierApp> {
  const logger = sinkLogger(logLines);
  app = await startCarrierApp(
    telnyxRoutes({
      intake,
      rest: createTelnyxRest({ apiUrl: api.url, apiKey: 'KEY-SECRET-1', connectionId: null, timeoutMs: 500 }),
      publicKeys: importTelnyxPublicKeys([account.publicKey]),
      refuseUnverified: false,
      codec: 'PCMU',
      logger,
      metrics,
      now: Date.now,
      ...overrides,
    }),
  );
  return app;
}

const valid = { kind: 'valid', account } as const;

async function apiCount(operation: string, outcome: string): Promise<number> {
  const metric = await metrics.carrierApiRequests.get();
  return (
    metric.values.find((v) => v.labels.operation === operation && v.labels.outcome === outcome)?.value ?? 0
  );
}

describe('telnyx call.initiated', () => {
  it('answers 200 at once, then answers the call with a bidirectional stream to the prepared media URL', async () => {
    const { baseUrl } = await start();
    const payload = callPayload({ from: '+15550001111', to: '+15550002222' });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', payload), valid);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true });
    expect(intake.announced).toEqual([
      {
        carrier: 'telnyx',
        callSid: payload.call_control_id,
        from: '+15550001111',
        to: '+15550002222',
        direction: 'inbound',
        mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
        verified: true,
      },
    ]);
    const request = await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    expect(request.path).toBe(
      `/v2/calls/${encodeURIComponent(String(payload.call_control_id))}/actions/answer`,
    );
    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(body).toMatchObject({
      stream_url: intake.prepared[0]!.mediaUrl,
      stream_track: 'inbound_track',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMU',
      stream_bidirectional_target_legs: 'self',
    });
    expect(decodeClientState(body.client_state)).toEqual({ token: intake.prepared[0]!.token });
    await expect.poll(() => apiCount('answer call', 'ok')).toBe(1);
  });

  it('announces L16 at 16 kHz when that codec is configured', async () => {
    const { baseUrl } = await start({ codec: 'L16' });
    await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    expect(intake.announced[0]!.mediaFormat).toEqual({
      encoding: 'linear16',
      sampleRate: 16000,
      channels: 1,
    });
  });

  it('counts and logs an answer that fails, and still answers the webhook 200', async () => {
    api.respond(() => ({ status: 500, body: { errors: [{ code: '10001' }] } }));
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    expect(answer.status).toBe(200);
    await expect.poll(() => apiCount('answer call', 'failed')).toBe(1);
    expect(logLines.some((line) => line.includes('telnyx request failed'))).toBe(true);
  });

  it('bounds an answer request that hangs, and closing the app waits for it', async () => {
    api.respond(() => 'hang' as const);
    const { baseUrl } = await start();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    await app!.close();
    app = undefined;
    expect(await apiCount('answer call', 'failed')).toBe(1);
  });

  it('answers a repeated call.initiated once', async () => {
    const { baseUrl } = await start();
    const event = telnyxEvent('call.initiated', callPayload());
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(200);
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(200);
    expect(intake.announced).toHaveLength(1);
    await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    expect(api.requests).toHaveLength(1);
  });

  it('answers the retry of a call.initiated whose preparation failed', async () => {
    const { baseUrl } = await start();
    const prepare = intake.prepare.bind(intake);
    let failures = 1;
    intake.prepare = (call) => {
      if (failures-- > 0) throw new Error('store unavailable');
      return prepare(call);
    };
    const event = telnyxEvent('call.initiated', callPayload());
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(500);
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(200);
    await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    expect(intake.announced).toHaveLength(1);
  });

  it('leaves our own outbound calls alone', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.initiated', callPayload({ direction: 'outgoing' })),
      valid,
    );
    expect(answer.status).toBe(200);
    expect(intake.admitted).toEqual([]);
    expect(intake.announced).toEqual([]);
  });

  it('without an API key, logs that the call cannot be answered and prepares nothing', async () => {
    const { baseUrl } = await start({ rest: null });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    expect(answer.status).toBe(200);
    expect(intake.announced).toEqual([]);
    expect(logLines.some((line) => line.includes('TELNYX_API_KEY is not set'))).toBe(true);
  });

  it('never logs the stream token or the API key', async () => {
    const { baseUrl } = await start();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    await expect.poll(() => apiCount('answer call', 'ok')).toBe(1);
    const logs = logLines.join('\n');
    expect(logs).not.toContain(intake.prepared[0]!.token);
    expect(logs).not.toContain('KEY-SECRET-1');
  });
});

describe('telnyx declined calls', () => {
  it('answers without a stream, speaks the message once answered, then hangs up', async () => {
    intake.admission = 'at_capacity';
    const { baseUrl } = await start();
    const callControlId = newCallControlId();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload({ callControlId })), valid);
    expect(intake.announced).toEqual([]);
    const answerRequest = await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    const answerBody = JSON.parse(answerRequest.body) as Record<string, unknown>;
    expect(answerBody.stream_url).toBeUndefined();
    const clientState = answerBody.client_state as string;
    expect(decodeClientState(clientState)).toEqual({ decline: true });

    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.answered', callPayload({ callControlId, clientState })),
      valid,
    );
    const speak = await api.waitFor((r) => r.path.endsWith('/actions/speak'));
    expect(JSON.parse(speak.body)).toMatchObject({ payload: intake.decline.message, voice: 'female' });

    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.speak.ended', callPayload({ callControlId, clientState })),
      valid,
    );
    await api.waitFor((r) => r.path.endsWith('/actions/hangup'));
    // The decline is counted once, by the core's admission (src/call/intake/intake.ts), not again here.
    expect(intake.admitted).toEqual(['telnyx']);
    expect((await metrics.callsDeclined.get()).values).toEqual([]);
  });

  it('plays the rendered decline when there is one, then hangs up once it ended', async () => {
    const { baseUrl } = await start();
    intake.decline.audioUrl = 'https://bridge.example.com/prompts/at_capacity.wav';
    const callControlId = newCallControlId();
    const clientState = encodeClientState({ decline: true });
    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.answered', callPayload({ callControlId, clientState })),
      valid,
    );
    const play = await api.waitFor((r) => r.path.endsWith('/actions/playback_start'));
    expect(JSON.parse(play.body)).toMatchObject({
      audio_url: 'https://bridge.example.com/prompts/at_capacity.wav',
      client_state: clientState,
    });
    expect(api.requests.some((r) => r.path.endsWith('/actions/speak'))).toBe(false);
    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.playback.ended', callPayload({ callControlId, clientState })),
      valid,
    );
    await api.waitFor((r) => r.path.endsWith('/actions/hangup'));
  });

  it('hangs up a declined call whose message cannot be spoken', async () => {
    const { baseUrl } = await start();
    api.respond((req) => (req.path.endsWith('/actions/speak') ? { status: 500 } : { status: 200, body: {} }));
    const clientState = encodeClientState({ decline: true });
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', callPayload({ clientState })), valid);
    await api.waitFor((r) => r.path.endsWith('/actions/hangup'));
    await expect.poll(() => apiCount('speak', 'failed')).toBe(1);
  });

  it('does not speak on calls it did not decline', async () => {
    const { baseUrl } = await start();
    const clientState = encodeClientState({ token: 't' });
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', callPayload({ clientState })), valid);
    await postTelnyxEvent(baseUrl, telnyxEvent('call.speak.ended', callPayload({ clientState })), valid);
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', callPayload()), valid);
    expect(api.requests).toEqual([]);
  });
});

describe('telnyx webhook verification', () => {
  it('refuses an unsigned request with the project error, before admitting anything', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()));
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_SIGNATURE', message: expect.stringContaining('missing') },
    });
    expect(intake.admitted).toEqual([]);
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'signature_missing' }]);
  });

  it('refuses a forged signature', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), {
      kind: 'forged',
    });
    expect(answer.status).toBe(403);
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'signature_bad_signature' }]);
    expect(intake.announced).toEqual([]);
  });

  it('refuses a replay of a signed webhook after 300 s', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()), {
      kind: 'expired',
      account,
    });
    expect(answer.status).toBe(403);
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'signature_expired' }]);
  });

  it('refuses a signed body that was altered', async () => {
    const { baseUrl } = await start();
    const body = JSON.stringify(telnyxEvent('call.initiated', callPayload()));
    const signed = telnyxHeaders(body, valid);
    const res = await fetch(`${baseUrl}/carriers/telnyx/events`, {
      method: 'POST',
      headers: signed,
      body: body.replace('+15005550001', '+15005550002'),
    });
    expect(res.status).toBe(403);
  });

  it('checks the signature whatever the content type says', async () => {
    const { baseUrl } = await start();
    const event = telnyxEvent('call.initiated', callPayload());
    const odd = await postTelnyxEvent(baseUrl, event, valid, { 'content-type': 'text/plain; charset=weird' });
    expect(odd.status).toBe(200);
    const unsigned = await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.initiated', callPayload()),
      { kind: 'none' },
      {
        'content-type': 'application/octet-stream',
      },
    );
    expect(unsigned.status).toBe(403);
  });

  it('acknowledges unsigned webhooks when no public key is set, outside production, acting on none', async () => {
    // An unverified webhook costs no carrier API call: every Telnyx answer is one.
    const { baseUrl } = await start({ publicKeys: [] });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()));
    expect(answer.status).toBe(200);
    expect(intake.announced).toHaveLength(0);
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'unverified' }]);
    // Closing waits for every API request the routes started; then a verified webhook is answered
    // through the API, and it alone was.
    await app!.close();
    const verified = await start();
    await postTelnyxEvent(verified.baseUrl, telnyxEvent('call.initiated', callPayload()), valid);
    await api.waitFor((r) => r.path.endsWith('/actions/answer'));
    expect(api.requests).toHaveLength(1);
  });

  it('refuses every webhook in production when no public key is set', async () => {
    const { baseUrl } = await start({ publicKeys: [], refuseUnverified: true });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', callPayload()));
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toContain('TELNYX_PUBLIC_KEY');
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'unverified' }]);
  });
});

describe('telnyx malformed and unknown webhooks', () => {
  it('answers invalid JSON with the project error and counts it', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, { raw: '{"data":' }, valid);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_REQUEST', message: 'telnyx webhook: body is not valid JSON' },
    });
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'malformed' }]);
  });

  const malformed: Array<[string, unknown]> = [
    ['a body that is not an object', [1, 2]],
    ['no data', { meta: {} }],
    ['a numeric event type', { data: { event_type: 5, payload: {} } }],
    ['an absurd event type', { data: { event_type: 'x'.repeat(200), payload: {} } }],
    ['a payload that is a string', { data: { event_type: 'call.initiated', payload: 'p' } }],
    [
      'call.initiated without a call id',
      { data: { event_type: 'call.initiated', payload: { direction: 'incoming' } } },
    ],
    [
      'call.hangup with a numeric call id',
      { data: { event_type: 'call.hangup', payload: { call_control_id: 7 } } },
    ],
  ];
  for (const [name, body] of malformed) {
    it(`answers 400 to ${name}`, async () => {
      const { baseUrl } = await start();
      const answer = await postTelnyxEvent(baseUrl, { raw: JSON.stringify(body) }, valid);
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
      expect(intake.announced).toEqual([]);
    });
  }

  it('answers an empty body 400', async () => {
    const { baseUrl } = await start({ publicKeys: [] });
    const res = await fetch(`${baseUrl}/carriers/telnyx/events`, { method: 'POST' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
  });

  it('answers a body over 64 KiB 413 in the project format', async () => {
    const { baseUrl } = await start();
    const answer = await postTelnyxEvent(baseUrl, { raw: 'x'.repeat(70 * 1024) }, valid);
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BODY_TOO_LARGE');
  });

  it('acknowledges events it does not act on', async () => {
    const { baseUrl } = await start();
    for (const type of ['call.hangup', 'streaming.started', 'streaming.failed', 'brand.new.event']) {
      const answer = await postTelnyxEvent(baseUrl, telnyxEvent(type, callPayload()), valid);
      expect(answer.status).toBe(200);
    }
    expect(intake.announced).toEqual([]);
    expect(api.requests).toEqual([]);
  });
});
