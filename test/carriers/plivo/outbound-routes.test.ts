// Plivo's webhooks of an outbound call on a real Fastify app holding only the Plivo routes, with a
// fake call intake: the hang-up URL's final status and the machine-detection verdict, each carrying
// the sealed context in its query, which the V3 signature covers. Signatures are made by the test
// helper with node:crypto, not with the project's code.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plivoRoutes } from '../../../src/carriers/plivo/routes.js';
import type { OutboundContext } from '../../../src/call/outbound/outbound-context.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import { newCallUuid, type PlivoSigning, plivoHeaders, postPlivo } from '../../helpers/plivo-carrier.js';

const AUTH_TOKEN = 'plivo-auth-token-for-tests';
const PUBLIC_URL = 'https://bridge.example.com';
const SEALED = 'c1.eyJhIjoxfQ.c2lnbmVk';
const CONTEXT: OutboundContext = {
  attemptId: 'cmp_1.2.1',
  campaignId: 'cmp_1',
  contact: 2,
  profile: 'default',
  variables: {},
  amd: { mode: 'voicemail', voicemailText: 'Call us back.', voicemailAudioUrl: null },
};

let app: CarrierApp | undefined;
let intake: FakeIntake;
let logLines: string[];

beforeEach(() => {
  intake = createFakeIntake();
  intake.outboundContext = async (_carrier, ref) => (ref === SEALED ? { ref, context: CONTEXT } : null);
  logLines = [];
});
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(): Promise<string> {
  app = await startCarrierApp(
    plivoRoutes({
      intake,
      authToken: AUTH_TOKEN,
      refuseUnverified: false,
      publicUrl: () => PUBLIC_URL,
      logger: sinkLogger(logLines),
      metrics: createMetrics('global'),
      now: Date.now,
    }),
  );
  return app.baseUrl;
}

const valid: PlivoSigning = { kind: 'valid', authToken: AUTH_TOKEN, publicUrl: PUBLIC_URL };
const HANGUP = `/carriers/plivo/hangup?context=${SEALED}`;
const MACHINE = `/carriers/plivo/machine?context=${SEALED}`;

function hangupParams(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    CallUUID: newCallUuid(),
    RequestUUID: newCallUuid(),
    From: '12125550199',
    To: '12125550172',
    Direction: 'outbound',
    Event: 'Hangup',
    CallStatus: 'busy',
    HangupCause: 'USER_BUSY',
    HangupCauseName: 'Busy Line',
    Duration: '0',
    ...overrides,
  };
}

describe("plivo's hang-up URL of an outbound call", () => {
  it.each([
    ['busy', 'USER_BUSY', 'busy'],
    ['no-answer', 'NO_ANSWER', 'no_answer'],
    ['timeout', 'NO_ANSWER', 'no_answer'],
    ['failed', 'UNALLOCATED_NUMBER', 'failed'],
    ['cancel', 'ORIGINATOR_CANCEL', 'canceled'],
    ['completed', 'NORMAL_CLEARING', 'completed'],
    // An unknown status word: the cause decides.
    ['', 'USER_BUSY', 'busy'],
    ['', 'ORIGINATOR_CANCEL', 'canceled'],
    ['', 'CALL_REJECTED', 'failed'],
  ])('reads CallStatus %j with HangupCause %s as %s', async (CallStatus, HangupCause, status) => {
    const baseUrl = await start();
    const params = hangupParams({ CallStatus, HangupCause, HangupCauseName: '' });
    const res = await postPlivo(baseUrl, HANGUP, params, valid);
    expect(res.status, res.body).toBe(200);
    expect(intake.statuses).toEqual([
      {
        carrier: 'plivo',
        callSid: params.CallUUID,
        from: '+12125550199',
        to: '+12125550172',
        context: CONTEXT,
        status,
        reason: `Plivo ${HangupCause}`,
        durationMs: 0,
      },
    ]);
  });

  it("carries Plivo's cause name and the call's duration", async () => {
    const baseUrl = await start();
    const params = hangupParams({
      CallStatus: 'completed',
      HangupCause: 'NORMAL_CLEARING',
      HangupCauseName: 'Normal Hangup',
      Duration: '42',
    });
    await postPlivo(baseUrl, HANGUP, params, valid);
    expect(intake.statuses[0]).toMatchObject({
      status: 'completed',
      reason: 'Plivo Normal Hangup',
      durationMs: 42_000,
    });
  });

  it('only logs the hang-up of a call it did not place', async () => {
    const baseUrl = await start();
    const res = await postPlivo(baseUrl, '/carriers/plivo/hangup', hangupParams(), valid);
    expect(res.status).toBe(200);
    expect(intake.statuses).toEqual([]);
  });

  it('refuses a forged or tampered context with a 400, reporting nothing', async () => {
    const baseUrl = await start();
    for (const context of ['c1.eyJhIjoyfQ.c2lnbmVk', '', 'x'.repeat(3000)]) {
      const res = await postPlivo(
        baseUrl,
        `/carriers/plivo/hangup?context=${context}`,
        hangupParams(),
        valid,
      );
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error).toEqual({
        code: 'CALLBRIDGE_BAD_REQUEST',
        message: 'the call context in this URL is not valid',
      });
    }
    expect(intake.statuses).toEqual([]);
    expect(intake.refusals.every((r) => r.reason === 'bad_context')).toBe(true);
  });

  it('refuses a hang-up whose status and cause name nothing, and a malformed CallUUID', async () => {
    const baseUrl = await start();
    const nothing = await postPlivo(
      baseUrl,
      HANGUP,
      hangupParams({ CallStatus: '', HangupCause: '' }),
      valid,
    );
    expect(nothing.status).toBe(400);
    expect(JSON.parse(nothing.body).error.message).toBe('CallStatus and HangupCause name no final status');
    for (const CallUUID of ['', 'has spaces']) {
      const res = await postPlivo(baseUrl, HANGUP, hangupParams({ CallUUID }), valid);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.message).toBe('CallUUID is missing or malformed');
    }
    expect(intake.statuses).toEqual([]);
  });

  it('verifies the signature over the URL with its query: one made for the bare URL is refused', async () => {
    const baseUrl = await start();
    const params = hangupParams();
    const bare = plivoHeaders('/carriers/plivo/hangup', params, valid);
    const moved = await fetch(`${baseUrl}${HANGUP}`, {
      method: 'POST',
      headers: bare,
      body: new URLSearchParams(params).toString(),
    });
    expect(moved.status).toBe(403);
    expect(await postPlivo(baseUrl, HANGUP, params, { kind: 'none' })).toMatchObject({ status: 403 });
    expect(intake.statuses).toEqual([]);
    expect(await postPlivo(baseUrl, HANGUP, params, valid)).toMatchObject({ status: 200 });
    expect(intake.statuses).toHaveLength(1);
  });

  it('never writes the sealed context or the auth token in its logs', async () => {
    const baseUrl = await start();
    await postPlivo(baseUrl, HANGUP, hangupParams(), valid);
    const logs = logLines.join('\n');
    expect(logs).not.toContain(SEALED);
    expect(logs).not.toContain(AUTH_TOKEN);
  });
});

describe("plivo's machine-detection URL", () => {
  it.each([
    ['true', 'machine'],
    ['false', 'human'],
    ['TRUE', 'machine'],
  ])('reads Machine=%s as %s, with no end of greeting', async (Machine, verdict) => {
    const baseUrl = await start();
    const CallUUID = newCallUuid();
    const res = await postPlivo(baseUrl, MACHINE, { CallUUID, Machine, To: '12125550150' }, valid);
    expect(res.status).toBe(200);
    expect(intake.verdicts).toEqual([
      {
        carrier: 'plivo',
        callSid: CallUUID,
        report: { verdict, messageEnded: false, detectionMs: null, raw: verdict },
      },
    ]);
  });

  it.each([[{ Machine: '' }], [{ Machine: 'maybe' }], [{ Machine: 'true', CallUUID: '' }]])(
    'refuses %j with a 400 that says why',
    async (overrides) => {
      const baseUrl = await start();
      const res = await postPlivo(baseUrl, MACHINE, { CallUUID: newCallUuid(), ...overrides }, valid);
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body).error.message).toMatch(
        /^(Machine must be true or false|CallUUID is missing or malformed)$/,
      );
      expect(intake.verdicts).toEqual([]);
    },
  );

  it('refuses a verdict with a forged context or a bad signature', async () => {
    const baseUrl = await start();
    const params = { CallUUID: newCallUuid(), Machine: 'true' };
    expect((await postPlivo(baseUrl, '/carriers/plivo/machine?context=c1.x.y', params, valid)).status).toBe(
      400,
    );
    expect(
      (await postPlivo(baseUrl, MACHINE, params, { kind: 'forged', publicUrl: PUBLIC_URL })).status,
    ).toBe(403);
    expect(intake.verdicts).toEqual([]);
  });
});

describe("plivo's webhooks name an outbound call's CallUUID for its attempt", () => {
  /** The intake's reports in the order the routes made them. */
  function inOrder(): string[] {
    const order: string[] = [];
    const { outboundCallIdentified, outboundStatus } = intake;
    intake.outboundCallIdentified = (...args) => {
      order.push(`identified ${args[2]}`);
      outboundCallIdentified(...args);
    };
    intake.outboundStatus = (report) => {
      order.push(`status ${report.callSid}`);
      outboundStatus(report);
    };
    return order;
  }

  it('names the CallUUID of a hang-up with its RequestUUID before the final status', async () => {
    const baseUrl = await start();
    const order = inOrder();
    const params = hangupParams({ CallStatus: 'cancel', HangupCause: 'ORIGINATOR_CANCEL' });
    expect(params.RequestUUID).not.toBe(params.CallUUID);
    expect((await postPlivo(baseUrl, HANGUP, params, valid)).status).toBe(200);
    expect(intake.identified).toEqual([
      { carrier: 'plivo', attemptId: CONTEXT.attemptId, callSid: params.CallUUID },
    ]);
    expect(order).toEqual([`identified ${params.CallUUID}`, `status ${params.CallUUID}`]);
  });

  it('names it from the answer URL of a call it placed, and not for an inbound call', async () => {
    const baseUrl = await start();
    const CallUUID = newCallUuid();
    const answer = {
      CallUUID,
      RequestUUID: newCallUuid(),
      From: '12125550199',
      To: '12125550172',
      Direction: 'outbound',
      CallStatus: 'in-progress',
    };
    const res = await postPlivo(baseUrl, `/carriers/plivo/answer?context=${SEALED}`, answer, valid);
    expect(res.status, res.body).toBe(200);
    expect(intake.identified).toEqual([
      { carrier: 'plivo', attemptId: CONTEXT.attemptId, callSid: CallUUID },
    ]);
    await postPlivo(baseUrl, '/carriers/plivo/answer', { ...answer, CallUUID: newCallUuid() }, valid);
    expect(intake.identified).toHaveLength(1);
  });

  it('names it from the machine-detection verdict', async () => {
    const baseUrl = await start();
    const CallUUID = newCallUuid();
    const params = { CallUUID, RequestUUID: newCallUuid(), Machine: 'false' };
    expect((await postPlivo(baseUrl, MACHINE, params, valid)).status).toBe(200);
    expect(intake.identified).toEqual([
      { carrier: 'plivo', attemptId: CONTEXT.attemptId, callSid: CallUUID },
    ]);
  });

  it('names it without a RequestUUID too: the context names the attempt', async () => {
    const baseUrl = await start();
    const params = hangupParams();
    delete params.RequestUUID;
    expect((await postPlivo(baseUrl, HANGUP, params, valid)).status).toBe(200);
    expect(intake.identified).toEqual([
      { carrier: 'plivo', attemptId: CONTEXT.attemptId, callSid: params.CallUUID },
    ]);
  });

  it.each([
    ['a malformed CallUUID', HANGUP, { CallUUID: 'not a uuid/..' }, valid],
    ['no final status', HANGUP, { CallStatus: '', HangupCause: '' }, valid],
    ['a forged context', '/carriers/plivo/hangup?context=c1.x.y', {}, valid],
    ['a bad signature', HANGUP, {}, { kind: 'forged', publicUrl: PUBLIC_URL } as PlivoSigning],
  ])('names nothing for a hang-up with %s', async (_name, path, overrides, signing) => {
    const baseUrl = await start();
    const res = await postPlivo(baseUrl, path, hangupParams(overrides), signing);
    expect([400, 403]).toContain(res.status);
    expect(intake.identified).toEqual([]);
    expect(intake.statuses).toEqual([]);
  });

  it('names nothing from an answer URL whose context does not open', async () => {
    const baseUrl = await start();
    const answer = { CallUUID: newCallUuid(), RequestUUID: newCallUuid(), Direction: 'outbound' };
    await postPlivo(baseUrl, '/carriers/plivo/answer?context=c1.x.y', answer, valid);
    expect(intake.identified).toEqual([]);
  });
});
