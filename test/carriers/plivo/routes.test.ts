// Plivo's webhook routes on a real Fastify app holding only their plugin, with a fake call intake.
// Signatures are made by the test helper with node:crypto, not with the project's code.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type PlivoRoutesDeps, plivoRoutes } from '../../../src/carriers/plivo/routes.js';
import { createMetrics, type Metrics } from '../../../src/metrics/metrics.js';
import { readPlivoXml } from '../../../src/sim/carrier/dialects/plivo-xml.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import { answerParams, newNonce, type PlivoSigning, postPlivo } from '../../helpers/plivo-carrier.js';

const AUTH_TOKEN = 'plivo-auth-token-for-tests';
const PUBLIC_URL = 'https://bridge.example.com';

let app: CarrierApp | undefined;
let intake: FakeIntake;
let metrics: Metrics;
let logLines: string[];

beforeEach(() => {
  intake = createFakeIntake();
  metrics = createMetrics('global');
  logLines = [];
});

afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(overrides: Partial<PlivoRoutesDeps> = {}): Promise<string> {
  app = await startCarrierApp(
    plivoRoutes({
      intake,
      authToken: AUTH_TOKEN,
      refuseUnverified: false,
      publicUrl: () => PUBLIC_URL,
      logger: sinkLogger(logLines),
      metrics,
      now: Date.now,
      ...overrides,
    }),
  );
  return app.baseUrl;
}

const valid = (extra: Partial<Extract<PlivoSigning, { kind: 'valid' }>> = {}): PlivoSigning => ({
  kind: 'valid',
  authToken: AUTH_TOKEN,
  publicUrl: PUBLIC_URL,
  ...extra,
});

describe('plivo answer URL', () => {
  it('answers a signed call with the bidirectional <Stream> to the prepared media URL', async () => {
    const baseUrl = await start();
    const params = answerParams({ From: '15550001111', To: '15550002222' });
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', params, valid());
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe('text/xml; charset=utf-8');
    expect(answer.streamUrl).toBe(intake.prepared[0]!.mediaUrl);
    expect(answer.streamAttributes).toEqual({
      bidirectional: 'true',
      keepCallAlive: 'true',
      contentType: 'audio/x-mulaw;rate=8000',
      statusCallbackUrl: `${PUBLIC_URL}/carriers/plivo/stream-status`,
      statusCallbackMethod: 'POST',
    });
    expect(answer.observer).toBe(intake.prepared[0]!.observerToken);
    expect(intake.announced).toEqual([
      {
        carrier: 'plivo',
        callSid: params.CallUUID,
        from: '+15550001111',
        to: '+15550002222',
        direction: 'inbound',
        mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
        verified: true,
      },
    ]);
  });

  it('keeps numbers that are not bare digits as Plivo sent them', async () => {
    const baseUrl = await start();
    await postPlivo(
      baseUrl,
      '/carriers/plivo/answer',
      answerParams({ From: 'sip:alice@example.com', To: '+15550002222' }),
      valid(),
    );
    expect(intake.announced[0]).toMatchObject({ from: 'sip:alice@example.com', to: '+15550002222' });
  });

  it('marks an outbound call as such, with the context its answer URL carries', async () => {
    intake.outboundContext = async (_carrier, ref, verified) =>
      verified && typeof ref === 'string'
        ? {
            ref,
            context: {
              attemptId: null,
              campaignId: 'campaign-7',
              contact: 9,
              profile: 'default',
              variables: {},
              amd: null,
            },
          }
        : null;
    const baseUrl = await start();
    const path = '/carriers/plivo/answer?context=campaign%3Ac1%2Ccontact%3A9';
    await postPlivo(baseUrl, path, answerParams({ Direction: 'outbound' }), valid());
    expect(intake.announced[0]).toMatchObject({
      direction: 'outbound',
      context: { ref: 'campaign:c1,contact:9' },
    });
    await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid());
    expect(intake.announced[1]!.context).toBeUndefined();
  });

  it('declines politely when not admitted: spoken message, then hang-up', async () => {
    intake.admission = 'draining';
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid());
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Speak>${intake.decline.message}</Speak><Hangup/></Response>`,
    );
    expect(intake.announced).toEqual([]);
    const declined = await metrics.callsDeclined.get();
    expect(declined.values[0]).toMatchObject({ labels: { carrier: 'plivo', reason: 'draining' }, value: 1 });
  });

  it('plays the rendered decline when there is one, then hangs up', async () => {
    intake.admission = 'at_capacity';
    intake.decline = {
      message: 'busy',
      redirectUrl: null,
      audioUrl: 'https://bridge.example.com/prompts/at_capacity.wav',
    };
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid());
    expect(answer.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Play>https://bridge.example.com/prompts/at_capacity.wav</Play><Hangup/></Response>',
    );
    expect(readPlivoXml(answer.body)).toMatchObject({
      kind: 'declined',
      say: '(the recording at https://bridge.example.com/prompts/at_capacity.wav)',
    });
  });

  it('redirects a declined call when a redirect URL is set', async () => {
    intake.admission = 'at_capacity';
    intake.decline = { message: 'busy', redirectUrl: 'https://overflow.example.com/answer' };
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid());
    expect(answer.body).toContain('<Redirect method="POST">https://overflow.example.com/answer</Redirect>');
  });

  it('answers a missing or malformed CallUUID 400 in the project format', async () => {
    const baseUrl = await start();
    for (const CallUUID of ['', 'has spaces', 'x'.repeat(65)]) {
      const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams({ CallUUID }), valid());
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body)).toEqual({
        error: { code: 'CALLBRIDGE_BAD_REQUEST', message: 'CallUUID is missing or malformed' },
      });
    }
    expect(intake.announced).toEqual([]);
    expect(intake.refusals.every((r) => r.reason === 'malformed')).toBe(true);
  });

  it('never logs the stream token', async () => {
    const baseUrl = await start();
    await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid());
    expect(logLines.join('\n')).not.toContain(intake.prepared[0]!.token);
  });
});

describe('plivo signatures', () => {
  it('refuses an unsigned request before admitting anything', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams());
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_SIGNATURE');
    expect(intake.admitted).toEqual([]);
    expect(intake.refusals).toEqual([{ carrier: 'plivo', reason: 'signature_missing' }]);
  });

  it('refuses a forged signature', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), {
      kind: 'forged',
      publicUrl: PUBLIC_URL,
    });
    expect(answer.status).toBe(403);
    expect(intake.refusals).toEqual([{ carrier: 'plivo', reason: 'signature_bad_signature' }]);
  });

  it('refuses a signature over another host (the public URL is what Plivo signs)', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), {
      kind: 'valid',
      authToken: AUTH_TOKEN,
      publicUrl: 'https://elsewhere.example.com',
    });
    expect(answer.status).toBe(403);
  });

  it('accepts the right signature among several (token rotation)', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(
      baseUrl,
      '/carriers/plivo/answer',
      answerParams(),
      valid({ extraSignatures: ['bm90LXRoaXMtb25l'] }),
    );
    expect(answer.status).toBe(200);
  });

  it('refuses a replayed request: a nonce is accepted once', async () => {
    const baseUrl = await start();
    const params = answerParams();
    const nonce = newNonce();
    expect((await postPlivo(baseUrl, '/carriers/plivo/answer', params, valid({ nonce }))).status).toBe(200);
    const replay = await postPlivo(baseUrl, '/carriers/plivo/answer', params, valid({ nonce }));
    expect(replay.status).toBe(403);
    expect(JSON.parse(replay.body).error.message).toContain('already used');
    expect(intake.announced).toHaveLength(1);
    expect(intake.refusals).toEqual([{ carrier: 'plivo', reason: 'signature_replayed' }]);
  });

  it('does not let a forged request use up a nonce', async () => {
    const baseUrl = await start();
    const params = answerParams();
    const nonce = newNonce();
    const forged = await postPlivo(baseUrl, '/carriers/plivo/answer', params, {
      kind: 'valid',
      authToken: 'wrong-token',
      publicUrl: PUBLIC_URL,
      nonce,
    });
    expect(forged.status).toBe(403);
    expect((await postPlivo(baseUrl, '/carriers/plivo/answer', params, valid({ nonce }))).status).toBe(200);
  });

  it('checks the signature whatever the content type says', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams(), valid(), {
      'content-type': 'text/plain',
    });
    expect(answer.status).toBe(200);
  });

  it('takes unsigned requests without a token, outside production', async () => {
    const baseUrl = await start({ authToken: null });
    expect((await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams())).status).toBe(200);
  });

  it('refuses every request in production without a token', async () => {
    const baseUrl = await start({ authToken: null, refuseUnverified: true });
    const answer = await postPlivo(baseUrl, '/carriers/plivo/answer', answerParams());
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toContain('PLIVO_AUTH_TOKEN');
    expect(intake.refusals).toEqual([{ carrier: 'plivo', reason: 'unverified' }]);
  });

  it('answers a body over 64 KiB 413 in the project format', async () => {
    const baseUrl = await start();
    const answer = await postPlivo(
      baseUrl,
      '/carriers/plivo/answer',
      { big: 'x'.repeat(70 * 1024) },
      valid(),
    );
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BODY_TOO_LARGE');
  });
});

describe('plivo hang-up, stream status and transfer routes', () => {
  it('logs signed hang-up and stream status callbacks, and refuses unsigned ones', async () => {
    const baseUrl = await start();
    const hangup = answerParams({ CallStatus: 'completed', HangupCauseName: 'Normal Hangup' });
    expect((await postPlivo(baseUrl, '/carriers/plivo/hangup', hangup, valid())).status).toBe(200);
    expect((await postPlivo(baseUrl, '/carriers/plivo/hangup', hangup)).status).toBe(403);
    const status = { CallUUID: hangup.CallUUID!, Event: 'StartStream', StreamID: 's-1' };
    expect((await postPlivo(baseUrl, '/carriers/plivo/stream-status', status, valid())).status).toBe(200);
    expect(logLines.some((l) => l.includes('plivo call hung up') && l.includes('Normal Hangup'))).toBe(true);
    expect(logLines.some((l) => l.includes('plivo stream status') && l.includes('StartStream'))).toBe(true);
  });

  it('answers the transfer route with the <Dial> of its target, signed over the URL with its query', async () => {
    const baseUrl = await start();
    const path = '/carriers/plivo/transfer?to=%2B15550100';
    const params = answerParams({ Event: 'Redirect' });
    const answer = await postPlivo(baseUrl, path, params, valid());
    expect(answer.status).toBe(200);
    expect(answer.body).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Number>15550100</Number></Dial></Response>',
    );
    const sip = await postPlivo(
      baseUrl,
      '/carriers/plivo/transfer?to=sip%3Adesk%40pbx.example.com',
      params,
      valid(),
    );
    expect(sip.body).toContain('<User>sip:desk@pbx.example.com</User>');
  });

  it('refuses a transfer route request that is unsigned or has no dialable target', async () => {
    const baseUrl = await start();
    const params = answerParams();
    expect((await postPlivo(baseUrl, '/carriers/plivo/transfer?to=%2B15550100', params)).status).toBe(403);
    for (const path of [
      '/carriers/plivo/transfer',
      '/carriers/plivo/transfer?to=evil',
      '/carriers/plivo/transfer?to=',
    ]) {
      const answer = await postPlivo(baseUrl, path, params, valid());
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    }
  });
});
