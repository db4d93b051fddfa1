import { afterEach, describe, expect, it } from 'vitest';
import { CarrierApiError } from '../../../src/errors.js';
import { createTelnyxRest, telnyxCommandId } from '../../../src/carriers/telnyx/rest.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';

const API_KEY = 'KEY0123456789SECRET';
const CALL = 'v3:abc-DEF_123';
const ACTIONS = `/v2/calls/${encodeURIComponent(CALL)}/actions`;

let api: FakeCarrierApi;

afterEach(async () => {
  await api?.close();
});

function client(timeoutMs = 2000, connectionId: string | null = '1293384261075731499') {
  return createTelnyxRest({ apiUrl: `${api.url}/`, apiKey: API_KEY, connectionId, timeoutMs });
}

async function rejection(promise: Promise<unknown>): Promise<CarrierApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(CarrierApiError);
    return err as CarrierApiError;
  }
  throw new Error('expected the request to fail');
}

describe('telnyx REST client', () => {
  it('answers with bidirectional RTP streaming, as JSON with a Bearer key', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
    await client().answer(CALL, {
      mediaUrl: 'wss://bridge.example/media/telnyx/i-1/tok',
      codec: 'PCMU',
      clientState: 'c3Q=',
    });
    const [req] = api.requests;
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe(`${ACTIONS}/answer`);
    expect(req!.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req!.contentType).toBe('application/json');
    expect(JSON.parse(req!.body)).toEqual({
      client_state: 'c3Q=',
      command_id: telnyxCommandId(CALL, 'answer'),
      stream_url: 'wss://bridge.example/media/telnyx/i-1/tok',
      stream_track: 'inbound_track',
      stream_codec: 'PCMU',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMU',
      stream_bidirectional_sampling_rate: 8000,
      stream_bidirectional_target_legs: 'self',
    });
  });

  it('asks for L16 at 16 kHz, and answers without a stream when declining', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: {} }));
    await client().answer(CALL, { mediaUrl: 'wss://x/m', codec: 'L16', clientState: 's' });
    expect(JSON.parse(api.requests[0]!.body)).toMatchObject({
      stream_bidirectional_codec: 'L16',
      stream_bidirectional_sampling_rate: 16000,
    });
    await client().answer(CALL, { codec: 'PCMU', clientState: 's' });
    expect(JSON.parse(api.requests[1]!.body)).toEqual({
      client_state: 's',
      command_id: telnyxCommandId(CALL, 'answer'),
    });
  });

  it('speaks, rejects, hangs up and transfers through the call actions', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: {} }));
    await client().speak(CALL, 'Please call back.', 'cs');
    await client().reject(CALL);
    await client().hangup(CALL);
    await client().transfer(CALL, '+15550100');
    expect(api.requests.map((r) => [r.path, JSON.parse(r.body)])).toEqual([
      [
        `${ACTIONS}/speak`,
        {
          payload: 'Please call back.',
          voice: 'female',
          language: 'en-US',
          client_state: 'cs',
          command_id: expect.stringMatching(/^[0-9a-f]{32}$/),
        },
      ],
      [`${ACTIONS}/reject`, { cause: 'CALL_REJECTED', command_id: telnyxCommandId(CALL, 'reject') }],
      [`${ACTIONS}/hangup`, { command_id: telnyxCommandId(CALL, 'hangup') }],
      [
        `${ACTIONS}/transfer`,
        { to: '+15550100', command_id: telnyxCommandId(CALL, 'transfer', '+15550100') },
      ],
    ]);
  });

  it('names each command by its call and kind, so Telnyx ignores a repeat', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: {} }));
    await client().hangup(CALL);
    await client().hangup(CALL);
    await client().hangup('v3:another');
    const ids = api.requests.map((r) => (JSON.parse(r.body) as { command_id: string }).command_id);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(telnyxCommandId(CALL, 'transfer', '+1')).not.toBe(telnyxCommandId(CALL, 'transfer', '+2'));
  });

  it('treats hanging up a call that already ended (422, code 90018) as done', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 422,
      body: {
        errors: [{ code: '90018', title: 'Call has already ended', detail: '+15550100 gone' }],
      },
    }));
    await expect(client().hangup(CALL)).resolves.toBeUndefined();
    await expect(client().reject(CALL)).resolves.toBeUndefined();
  });

  it('does not treat other 422s, or an ended call on transfer, as done', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 422,
      body: { errors: [{ code: '90018', title: 'ended' }] },
    }));
    const transfer = await rejection(client().transfer(CALL, '+15550100'));
    expect(transfer).toMatchObject({ status: 422, carrierCode: '90018', retryable: false });
    api.respond(() => ({ status: 422, body: { errors: [{ code: 90015, title: 'invalid' }] } }));
    const hangup = await rejection(client().hangup(CALL));
    expect(hangup).toMatchObject({
      status: 422,
      carrierCode: '90015',
      retryable: false,
      code: 'CALLBRIDGE_CARRIER_API',
    });
  });

  it('marks 5xx and 429 retryable, and 401 not', async () => {
    api = await startFakeCarrierApi(() => ({ status: 503, body: { errors: [] } }));
    expect(await rejection(client().hangup(CALL))).toMatchObject({ status: 503, retryable: true });
    api.respond(() => ({ status: 429 }));
    expect(await rejection(client().hangup(CALL))).toMatchObject({ status: 429, retryable: true });
    api.respond(() => ({
      status: 401,
      body: { errors: [{ code: '10009', title: 'Authentication failed' }] },
    }));
    const err = await rejection(client().hangup(CALL));
    expect(err).toMatchObject({ status: 401, retryable: false });
    expect(err.message).toBe('telnyx hang up call: HTTP 401 (Telnyx error 10009)');
  });

  it('times out a request that gets no answer, retryably, without the key in the message', async () => {
    api = await startFakeCarrierApi(() => 'hang' as const);
    const err = await rejection(client(100).answer(CALL, { codec: 'PCMU', clientState: 's' }));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('telnyx answer call: timed out after 100 ms');
    expect(err.message).not.toContain(API_KEY);
  });

  it('reports a network error retryably', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: {} }));
    const url = api.url;
    await api.close();
    const rest = createTelnyxRest({ apiUrl: url, apiKey: API_KEY, connectionId: null, timeoutMs: 1000 });
    expect(await rejection(rest.hangup(CALL))).toMatchObject({ retryable: true, status: undefined });
  });

  it('does not leak the error text Telnyx sent', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 400,
      body: { errors: [{ code: 'a very long code with spaces', detail: '+15550100' }] },
    }));
    const err = await rejection(client().transfer(CALL, '+15550100'));
    expect(err.message).toBe('telnyx transfer call: HTTP 400');
  });

  it('places an outbound call with answering-machine detection, without a stream by default', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 200,
      body: { data: { call_control_id: 'v3:new', is_alive: false } },
    }));
    await client().originate({
      to: '+15550100',
      from: '+15550199',
      webhookUrl: 'https://bridge.example/carriers/telnyx/events',
      clientState: 'cs',
      amd: 'greeting_end',
      amdConfig: { greeting_total_analysis_time_millis: 30000 },
    });
    expect(JSON.parse(api.requests[0]!.body)).toEqual({
      connection_id: '1293384261075731499',
      to: '+15550100',
      from: '+15550199',
      webhook_url: 'https://bridge.example/carriers/telnyx/events',
      webhook_url_method: 'POST',
      client_state: 'cs',
      answering_machine_detection: 'greeting_end',
      answering_machine_detection_config: { greeting_total_analysis_time_millis: 30000 },
    });
  });

  it("starts an answered call's bidirectional stream, with its client state", async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
    await client().streamingStart(CALL, { mediaUrl: 'wss://x/m', codec: 'L16', clientState: 'cs' });
    const [req] = api.requests;
    expect(req!.path).toBe(`${ACTIONS}/streaming_start`);
    expect(JSON.parse(req!.body)).toEqual({
      stream_url: 'wss://x/m',
      stream_track: 'inbound_track',
      stream_codec: 'L16',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'L16',
      stream_bidirectional_sampling_rate: 16000,
      stream_bidirectional_target_legs: 'self',
      client_state: 'cs',
      command_id: telnyxCommandId(CALL, 'streaming_start'),
    });
    api.respond(() => ({ status: 422, body: { errors: [{ code: '90018' }] } }));
    // A stream cannot start on a call that has ended: unlike a hang-up, that is a failure.
    expect(
      await rejection(
        client().streamingStart(CALL, { mediaUrl: 'wss://x/m', codec: 'L16', clientState: 'cs' }),
      ),
    ).toMatchObject({ status: 422, carrierCode: '90018', retryable: false });
  });

  it('places an outbound call with the stream fields when asked to', async () => {
    api = await startFakeCarrierApi(() => ({
      status: 200,
      body: {
        data: { call_control_id: 'v3:new', call_leg_id: 'leg', call_session_id: 'sess', is_alive: false },
      },
    }));
    const placed = await client().originate({
      to: '+15550100',
      from: '+15550199',
      stream: { mediaUrl: 'wss://bridge.example/media/telnyx/i-1/tok', codec: 'PCMA' },
      webhookUrl: 'https://bridge.example/carriers/telnyx/events',
      clientState: 'cs',
      amd: 'detect_beep',
      timeoutSecs: 30,
    });
    expect(placed).toEqual({ callSid: 'v3:new', callLegId: 'leg', callSessionId: 'sess' });
    const [req] = api.requests;
    expect(req!.path).toBe('/v2/calls');
    expect(JSON.parse(req!.body)).toEqual({
      connection_id: '1293384261075731499',
      to: '+15550100',
      from: '+15550199',
      webhook_url: 'https://bridge.example/carriers/telnyx/events',
      webhook_url_method: 'POST',
      stream_url: 'wss://bridge.example/media/telnyx/i-1/tok',
      stream_track: 'inbound_track',
      stream_codec: 'PCMA',
      stream_bidirectional_mode: 'rtp',
      stream_bidirectional_codec: 'PCMA',
      stream_bidirectional_sampling_rate: 8000,
      stream_bidirectional_target_legs: 'self',
      client_state: 'cs',
      answering_machine_detection: 'detect_beep',
      timeout_secs: 30,
    });
  });

  it('refuses to place a call without a connection id, and a create answer without an id', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: { data: {} } }));
    const request = {
      to: '+1',
      from: '+2',
      webhookUrl: 'https://x',
    };
    expect(await rejection(client(1000, null).originate(request))).toMatchObject({ retryable: false });
    expect(api.requests).toHaveLength(0);
    expect(await rejection(client().originate(request))).toMatchObject({ retryable: false });
  });

  it("reads a call's status in the common status words", async () => {
    api = await startFakeCarrierApi(() => ({
      status: 200,
      body: { data: { call_control_id: CALL, is_alive: true, call_duration: 42 } },
    }));
    expect(await client().status(CALL)).toEqual({
      callSid: CALL,
      status: 'in-progress',
      carrierStatus: 'alive',
    });
    expect(api.requests[0]).toMatchObject({ method: 'GET', path: `/v2/calls/${encodeURIComponent(CALL)}` });
    api.respond(() => ({ status: 200, body: { data: { is_alive: false, call_duration: 42 } } }));
    expect(await client().status(CALL)).toMatchObject({ status: 'completed', carrierStatus: 'ended' });
    // Ended without lasting: busy, unanswered or failed, which only call.hangup tells apart.
    api.respond(() => ({ status: 200, body: { data: { is_alive: false, call_duration: 0 } } }));
    expect(await client().status(CALL)).toMatchObject({
      status: 'failed',
      carrierStatus: 'ended unanswered',
    });
    api.respond(() => ({ status: 404, body: { errors: [{ code: '10005' }] } }));
    expect(await client().status(CALL)).toEqual({
      callSid: CALL,
      status: 'unknown',
      carrierStatus: 'unknown',
    });
    api.respond(() => ({ status: 200, body: { data: {} } }));
    expect(await rejection(client().status(CALL))).toMatchObject({ retryable: true });
  });
});
