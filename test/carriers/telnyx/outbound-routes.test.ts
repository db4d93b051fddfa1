// Telnyx's webhooks about calls this server placed (docs/protocols/telnyx.md section 9), on a real
// Fastify app holding only the Telnyx plugin, a fake intake that resolves context references with a
// test secret, and a fake Telnyx API: an answered call is prepared and its stream started, its hang-up
// becomes its final status, the detection events its verdict, and every malformed or forged event
// is refused with a clear 400 (a bad signature with 403) and no request to Telnyx.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeClientState } from '../../../src/carriers/telnyx/client-state.js';
import { createTelnyxRest, telnyxCommandId } from '../../../src/carriers/telnyx/rest.js';
import { telnyxRoutes } from '../../../src/carriers/telnyx/routes.js';
import { importTelnyxPublicKeys } from '../../../src/carriers/telnyx/signature.js';
import {
  encodeContext,
  issueContextRef,
  outboundContexts,
} from '../../../src/call/outbound/outbound-context.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import {
  callPayload,
  postTelnyxEvent,
  type TelnyxAccount,
  telnyxAccount,
  telnyxEvent,
} from '../../helpers/telnyx-carrier.js';

const SECRET = 'stream-token-secret-for-telnyx-outbound-tests';
const API_KEY = 'KEY-SECRET-OUTBOUND';
const account: TelnyxAccount = telnyxAccount();
const valid = { kind: 'valid', account } as const;
const CONTEXT = {
  attemptId: 'cmp_1.3.1',
  campaignId: 'cmp_1',
  contact: 3,
  profile: 'default',
  variables: { name: 'Ada' },
  amd: { mode: 'voicemail' as const, voicemailText: 'Call us back.', voicemailAudioUrl: null },
};
const BINDING = { carrier: 'telnyx', expiresAtMs: Date.now() + 3_600_000 };
/** The store's kept contexts, as the intake reads them by reference. */
const kept = new Map<string, string>();
const contexts = outboundContexts(SECRET, {
  putOutboundContext: async (id, value) => void kept.set(id, value),
  getOutboundContext: async (id) => kept.get(id) ?? null,
});
const issued = issueContextRef(SECRET, 'telnyx');
kept.set(issued.id, encodeContext(CONTEXT, BINDING));
const SEALED = issued.ref;
const OUR_STATE = encodeClientState({ ctx: SEALED });

let api: FakeCarrierApi;
let app: CarrierApp | undefined;
let intake: FakeIntake;
let logLines: string[];

beforeEach(async () => {
  api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
  intake = createFakeIntake();
  intake.outboundContext = async (carrier, ref) => {
    const context = await contexts.resolve(ref, carrier);
    return context === null ? null : { ref: ref as string, context };
  };
  logLines = [];
});

afterEach(async () => {
  await app?.close();
  app = undefined;
  await api.close();
});

async function start(): Promise<string> {
  app = await startCarrierApp(
    telnyxRoutes({
      intake,
      rest: createTelnyxRest({ apiUrl: api.url, apiKey: API_KEY, connectionId: 'conn-1', timeoutMs: 500 }),
      publicKeys: importTelnyxPublicKeys([account.publicKey]),
      refuseUnverified: false,
      codec: 'PCMU',
      logger: sinkLogger(logLines),
      metrics: createMetrics('global'),
      now: Date.now,
    }),
  );
  return app.baseUrl;
}

const outgoing = (extra: Record<string, unknown> = {}) => ({
  ...callPayload({ direction: 'outgoing', from: '+15550001111', to: '+15550002222', clientState: OUR_STATE }),
  ...extra,
});

describe('telnyx outbound: the answer', () => {
  it('does not answer an outgoing call.initiated', async () => {
    const baseUrl = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.initiated', outgoing()), valid);
    expect(answer.status).toBe(200);
    expect(intake.announced).toEqual([]);
    // The answered event that follows is the first request to Telnyx: nothing was sent before it.
    const payload = outgoing();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', payload), valid);
    const first = await api.waitFor(() => true);
    expect(first.path).toBe(
      `/v2/calls/${encodeURIComponent(payload.call_control_id as string)}/actions/streaming_start`,
    );
  });

  it('prepares an answered call with its context, then starts its bidirectional stream', async () => {
    const baseUrl = await start();
    const payload = outgoing();
    const callSid = payload.call_control_id as string;
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', payload), valid);
    expect(answer.status).toBe(200);
    expect(intake.announced).toEqual([
      {
        carrier: 'telnyx',
        callSid,
        from: '+15550001111',
        to: '+15550002222',
        direction: 'outbound',
        mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
        verified: true,
        context: { ref: SEALED, context: CONTEXT },
      },
    ]);
    const request = await api.waitFor((r) => r.path.endsWith('/actions/streaming_start'));
    expect(request.authorization).toBe(`Bearer ${API_KEY}`);
    expect(JSON.parse(request.body)).toEqual({
      stream_url: intake.prepared[0]!.mediaUrl,
      stream_track: 'inbound_track',
      stream_codec: 'PCMU',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMU',
      stream_bidirectional_sampling_rate: 8000,
      stream_bidirectional_target_legs: 'self',
      // The context stays with the call, so its hang-up still names its attempt.
      client_state: OUR_STATE,
      command_id: telnyxCommandId(callSid, 'streaming_start'),
    });
  });

  it('starts the stream once when Telnyx repeats call.answered', async () => {
    const baseUrl = await start();
    const event = telnyxEvent('call.answered', outgoing());
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(200);
    expect((await postTelnyxEvent(baseUrl, event, valid)).status).toBe(200);
    await api.waitFor((r) => r.path.endsWith('/actions/streaming_start'));
    expect(intake.announced).toHaveLength(1);
  });

  it('hangs up an answered call whose stream cannot start, rather than leave a silent line', async () => {
    api.respond((r) =>
      r.path.endsWith('/streaming_start')
        ? { status: 500, body: { errors: [{ code: '90000' }] } }
        : { status: 200, body: {} },
    );
    const baseUrl = await start();
    const payload = outgoing();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', payload), valid);
    const hangup = await api.waitFor((r) => r.path.endsWith('/actions/hangup'));
    expect(hangup.path).toBe(
      `/v2/calls/${encodeURIComponent(payload.call_control_id as string)}/actions/hangup`,
    );
  });

  it('declines an answered call when the instance cannot take it: the message, then the hang-up', async () => {
    intake.admission = 'at_capacity';
    const baseUrl = await start();
    const payload = outgoing();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', payload), valid);
    const speak = await api.waitFor((r) => r.path.endsWith('/actions/speak'));
    const state = JSON.parse(speak.body).client_state as string;
    expect(intake.announced).toEqual([]);
    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.speak.ended', { ...payload, client_state: state }),
      valid,
    );
    await api.waitFor((r) => r.path.endsWith('/actions/hangup'));
    // The context rode along with the decline: the hang-up still reports the attempt.
    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.hangup', { ...payload, client_state: state, hangup_cause: 'normal_clearing' }),
      valid,
    );
    expect(intake.statuses).toMatchObject([{ status: 'completed', context: CONTEXT }]);
  });
});

describe('telnyx outbound: the hang-up', () => {
  it.each([
    ['normal_clearing', 'completed'],
    ['user_busy', 'busy'],
    ['call_rejected', 'busy'],
    ['timeout', 'no_answer'],
    ['no_answer', 'no_answer'],
    ['originator_cancel', 'canceled'],
    ['destination_out_of_order', 'failed'],
    ['a_cause_from_the_future', 'failed'],
  ])('reports hangup_cause %s as %s', async (cause, status) => {
    const baseUrl = await start();
    const payload = outgoing({ hangup_cause: cause, hangup_source: 'callee' });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent('call.hangup', payload), valid);
    expect(answer.status).toBe(200);
    expect(intake.statuses).toEqual([
      {
        carrier: 'telnyx',
        callSid: payload.call_control_id,
        from: '+15550001111',
        to: '+15550002222',
        context: CONTEXT,
        status,
        reason: `hangup_cause ${cause}`,
        durationMs: null,
      },
    ]);
  });

  it('reads a missing or odd cause as a failure, its word not echoed', async () => {
    const baseUrl = await start();
    await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.hangup', outgoing({ hangup_cause: 'DROP TABLE\n' })),
      valid,
    );
    await postTelnyxEvent(baseUrl, telnyxEvent('call.hangup', outgoing({ hangup_cause: undefined })), valid);
    expect(intake.statuses.map((s) => [s.status, s.reason])).toEqual([
      ['failed', 'hangup_cause unspecified'],
      ['failed', 'hangup_cause unspecified'],
    ]);
  });

  it('reports nothing for an inbound call', async () => {
    const baseUrl = await start();
    const answer = await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.hangup', callPayload({ clientState: encodeClientState({ token: 't' }) })),
      valid,
    );
    expect(answer.status).toBe(200);
    expect(intake.statuses).toEqual([]);
  });
});

describe('telnyx outbound: answering-machine detection', () => {
  it.each([
    ['call.machine.detection.ended', 'human', 'human', false],
    ['call.machine.detection.ended', 'machine', 'machine', false],
    ['call.machine.detection.ended', 'not_sure', 'unknown', false],
    ['call.machine.detection.ended', 'something_new', 'unknown', false],
    ['call.machine.greeting.ended', 'beep_detected', 'machine', true],
    ['call.machine.greeting.ended', 'ended', 'machine', true],
    ['call.machine.greeting.ended', 'not_sure', 'machine', true],
  ])('reads %s %s as %s (greeting over: %s)', async (type, result, verdict, messageEnded) => {
    const baseUrl = await start();
    const payload = outgoing({ result });
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent(type, payload), valid);
    expect(answer.status).toBe(200);
    expect(intake.verdicts).toEqual([
      {
        carrier: 'telnyx',
        callSid: payload.call_control_id,
        report: { verdict, messageEnded, detectionMs: null, raw: result },
      },
    ]);
  });
});

describe('telnyx outbound: refused events', () => {
  const forged = encodeClientState({
    ctx: issueContextRef('another-secret-entirely-000000000', 'telnyx').ref,
  });
  const notOurs = Buffer.from(JSON.stringify({ cb: 1, ctx: 42 })).toString('base64');

  it.each([
    ['call.answered', 'a context issued elsewhere', { client_state: forged }, /client_state is not valid/],
    ['call.answered', 'a context that is no string', { client_state: notOurs }, /client_state is not valid/],
    [
      'call.hangup',
      'a context issued elsewhere',
      { client_state: forged, hangup_cause: 'normal_clearing' },
      /client_state is not valid/,
    ],
    [
      'call.machine.detection.ended',
      'a context issued elsewhere',
      { client_state: forged, result: 'human' },
      /client_state is not valid/,
    ],
    ['call.machine.detection.ended', 'no result', { result: undefined }, /payload.result is missing/],
    ['call.machine.detection.ended', 'a numeric result', { result: 7 }, /payload.result is missing/],
    [
      'call.machine.greeting.ended',
      'a huge result',
      { result: 'x'.repeat(200) },
      /payload.result is missing/,
    ],
    ['call.answered', 'no call id', { call_control_id: undefined }, /call_control_id is missing/],
    ['call.hangup', 'an object for a call id', { call_control_id: { id: 1 } }, /call_control_id is missing/],
  ])('refuses %s with %s', async (type, _name, extra, message) => {
    const baseUrl = await start();
    const answer = await postTelnyxEvent(baseUrl, telnyxEvent(type, outgoing(extra)), valid);
    expect(answer.status).toBe(400);
    const error = JSON.parse(answer.body).error as { code: string; message: string };
    expect(error.code).toBe('CALLBRIDGE_BAD_REQUEST');
    expect(error.message).toMatch(message);
    expect(answer.body).not.toContain(API_KEY);
    expect(intake.announced).toEqual([]);
    expect(intake.statuses).toEqual([]);
    expect(intake.verdicts).toEqual([]);
    expect(api.requests).toEqual([]);
    expect(intake.refusals).toHaveLength(1);
  });

  it('counts a forged context under its own reason', async () => {
    const baseUrl = await start();
    await postTelnyxEvent(baseUrl, telnyxEvent('call.answered', outgoing({ client_state: forged })), valid);
    expect(intake.refusals).toEqual([{ carrier: 'telnyx', reason: 'bad_context' }]);
  });

  it.each([
    ['unsigned', { kind: 'none' } as const],
    ['signed with another key', { kind: 'forged' } as const],
    ['signed too long ago', { kind: 'expired', account } as const],
  ])('refuses a hang-up %s with 403, reporting nothing', async (_name, signing) => {
    const baseUrl = await start();
    const answer = await postTelnyxEvent(
      baseUrl,
      telnyxEvent('call.hangup', outgoing({ hangup_cause: 'user_busy' })),
      signing,
    );
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.code).toBe('CALLBRIDGE_BAD_SIGNATURE');
    expect(intake.statuses).toEqual([]);
  });
});
