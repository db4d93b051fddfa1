// The Telnyx call placer against a fake Telnyx API scripted by the test: what `POST /v2/calls`
// carries (our events webhook, the sealed context in client_state, detection of the greeting's end
// only when asked, no stream yet), the caller ID default, the status words, a hang-up that tolerates
// an ended call, and Telnyx's refusals classified retryable or not.
import { afterEach, describe, expect, it } from 'vitest';
import { buildCallPlacers, SIMULATED_TELNYX_CONNECTION_ID } from '../../../src/carriers/index.js';
import { decodeClientState } from '../../../src/carriers/telnyx/client-state.js';
import { createTelnyxPlacer } from '../../../src/carriers/telnyx/placer.js';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
import { loadConfig } from '../../../src/carriers/load-config.js';
import { CarrierApiError } from '../../../src/errors.js';
import { classifyOriginateError } from '../../../src/outbound/carrier-errors.js';
import {
  type FakeApiAnswer,
  type FakeCarrierApi,
  startFakeCarrierApi,
} from '../../helpers/fake-carrier-api.js';
import { MINIMAL_PROJECT } from '../../config/project.js';

const CREATED: FakeApiAnswer = {
  status: 200,
  body: {
    data: { call_control_id: 'v3:placed-1', call_leg_id: 'leg', call_session_id: 'sess', is_alive: false },
  },
};
const CONTEXT = 'c1.eyJhIjoxfQ.c2lnbmF0dXJl';

let api: FakeCarrierApi;

afterEach(async () => {
  await api?.close();
});

async function placer(answer: FakeApiAnswer = CREATED, defaultFrom: string | null = '+15550009999') {
  api = await startFakeCarrierApi(() => answer);
  const rest = createTelnyxRest({ apiUrl: api.url, apiKey: 'KEY-1', connectionId: 'conn-7', timeoutMs: 300 });
  return createTelnyxPlacer({ rest, publicUrl: () => 'https://bridge.example.com/', defaultFrom });
}

async function failure(promise: Promise<unknown>): Promise<CarrierApiError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CarrierApiError);
  return err as CarrierApiError;
}

describe('telnyx placer', () => {
  it('places the call with our webhook and the context in client_state, detecting the greeting end', async () => {
    const telnyx = await placer();
    expect(telnyx.carrier).toBe('telnyx');
    const placed = await telnyx.place({
      to: '+15550100',
      from: '+15550199',
      context: CONTEXT,
      detectMachine: true,
    });
    expect(placed).toEqual({ callSid: 'v3:placed-1' });
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/v2/calls', authorization: 'Bearer KEY-1' });
    const body = JSON.parse(request!.body) as Record<string, unknown>;
    expect(body).toEqual({
      connection_id: 'conn-7',
      to: '+15550100',
      from: '+15550199',
      webhook_url: 'https://bridge.example.com/carriers/telnyx/events',
      webhook_url_method: 'POST',
      client_state: expect.any(String),
      answering_machine_detection: 'greeting_end',
      answering_machine_detection_config: { greeting_total_analysis_time_millis: 30000 },
      timeout_secs: 30,
    });
    expect(decodeClientState(body.client_state)).toEqual({ ctx: CONTEXT });
  });

  it('asks for no detection when none is wanted, and calls from the routed number by default', async () => {
    const telnyx = await placer();
    await telnyx.place({ to: '+15550100', from: null, context: CONTEXT, detectMachine: false });
    const body = JSON.parse(api.requests[0]!.body) as Record<string, unknown>;
    expect(body.from).toBe('+15550009999');
    expect(body).not.toHaveProperty('answering_machine_detection');
    expect(body).not.toHaveProperty('answering_machine_detection_config');
    expect(body).not.toHaveProperty('stream_url');
  });

  it('refuses a call with no caller ID before asking Telnyx', async () => {
    const telnyx = await placer(CREATED, null);
    const err = await failure(
      telnyx.place({ to: '+15550100', from: null, context: CONTEXT, detectMachine: false }),
    );
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/no caller ID/);
    expect(api.requests).toEqual([]);
  });

  it.each([
    [{ status: 422, body: { errors: [{ code: '10015', title: 'Invalid parameter' }] } }, 'failed', false],
    [{ status: 401, body: { errors: [{ code: '10009' }] } }, 'failed', false],
    [{ status: 429, body: { errors: [{ code: '10011' }] } }, 'retry_later', true],
    [{ status: 503, body: 'unavailable' }, 'retry_later', true],
    // Accepted, but with no call id: the call may exist, so it is never placed twice blindly.
    [{ status: 200, body: { data: {} } }, 'failed', false],
    ['hang', 'unknown', true],
  ] as Array<[FakeApiAnswer, string, boolean]>)(
    'classifies a create answered %j as %s',
    async (answer, kind, retryable) => {
      const telnyx = await placer(answer);
      const err = await failure(
        telnyx.place({ to: '+15550100', from: null, context: CONTEXT, detectMachine: false }),
      );
      expect(err.retryable).toBe(retryable);
      expect(classifyOriginateError(err).kind).toBe(kind);
      expect(err.message).not.toContain('KEY-1');
    },
  );

  it('reads the call status in the common words', async () => {
    const telnyx = await placer({ status: 200, body: { data: { is_alive: true, call_duration: 0 } } });
    expect(await telnyx.status('v3:placed-1')).toEqual({
      callSid: 'v3:placed-1',
      status: 'in-progress',
      carrierStatus: 'alive',
    });
    expect(api.requests[0]).toMatchObject({ method: 'GET', path: '/v2/calls/v3%3Aplaced-1' });
    api.respond(() => ({ status: 200, body: { data: { is_alive: false, call_duration: 12 } } }));
    expect((await telnyx.status('v3:placed-1')).status).toBe('completed');
    api.respond(() => ({ status: 404, body: { errors: [{ code: '10005' }] } }));
    expect((await telnyx.status('v3:placed-1')).status).toBe('unknown');
  });

  it('hangs up, taking an ended or unknown call as done, and reports other failures', async () => {
    const telnyx = await placer({ status: 200, body: { data: { result: 'ok' } } });
    await telnyx.hangup('v3:placed-1');
    expect(api.requests[0]!.path).toBe('/v2/calls/v3%3Aplaced-1/actions/hangup');
    api.respond(() => ({
      status: 422,
      body: { errors: [{ code: '90018', title: 'Call has already ended' }] },
    }));
    await expect(telnyx.hangup('v3:placed-1')).resolves.toBeUndefined();
    api.respond(() => ({ status: 404, body: { errors: [{ code: '10005' }] } }));
    await expect(telnyx.hangup('v3:placed-1')).resolves.toBeUndefined();
    api.respond(() => ({ status: 500, body: {} }));
    expect((await failure(telnyx.hangup('v3:placed-1'))).retryable).toBe(true);
  });
});

describe('telnyx among the call placers', () => {
  const carriers = (env: Record<string, string>, simulatedApiUrl: string | null = null) =>
    buildCallPlacers(loadConfig(env, { cwd: MINIMAL_PROJECT }), { simulatedApiUrl }).map((p) => p.carrier);

  it('places through Telnyx with an API key and a connection id, Twilio staying the default', () => {
    expect(carriers({ TELNYX_API_KEY: 'KEY-1', TELNYX_CONNECTION_ID: 'conn-7' })).toEqual(['telnyx']);
    expect(carriers({ TELNYX_API_KEY: 'KEY-1' })).toEqual([]);
    expect(carriers({})).toEqual([]);
    expect(carriers({}, 'http://127.0.0.1:9')).toEqual(['twilio', 'telnyx', 'plivo', 'vonage', 'exotel']);
    // A key set means the real API: never the simulated one, even with no connection id.
    expect(carriers({ TELNYX_API_KEY: 'KEY-1' }, 'http://127.0.0.1:9')).not.toContain('telnyx');
  });

  it('places simulated Telnyx calls on the simulated API, naming a connection', async () => {
    api = await startFakeCarrierApi(() => CREATED);
    const [, telnyx] = buildCallPlacers(loadConfig({}, { cwd: MINIMAL_PROJECT }), {
      simulatedApiUrl: api.url,
    });
    await telnyx!.place({ to: '+15550100', from: null, context: CONTEXT, detectMachine: false });
    const body = JSON.parse(api.requests[0]!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ connection_id: SIMULATED_TELNYX_CONNECTION_ID });
    expect(body.from).toMatch(/^\+\d+$/);
  });
});
