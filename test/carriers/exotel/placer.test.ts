// The Exotel placer against a fake Exotel API scripted by each test: the create-call request's
// fields, the context kept by call sid, the status read back, and errors classified retryable or not.
import { afterEach, describe, expect, it } from 'vitest';
import { createExotelPlacer } from '../../../src/carriers/exotel/placer.js';
import { createExotelRest } from '../../../src/carriers/exotel/rest.js';
import type { CallPlacer } from '../../../src/outbound/ports.js';
import { CarrierApiError } from '../../../src/errors.js';
import type { FakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { startFakeExotelApi } from '../../helpers/fake-exotel-api.js';

const FLOW = 'http://my.exotel.com/acme1/exoml/start_voice/42';
let api: FakeCarrierApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function placer(opts: { defaultFrom?: string | null; now?: () => number } = {}): Promise<CallPlacer> {
  api = await startFakeExotelApi();
  const rest = createExotelRest({
    apiUrl: api.url,
    accountSid: 'acme1',
    apiKey: 'key',
    apiToken: 'token',
    timeoutMs: 2000,
  });
  return createExotelPlacer({
    rest,
    flowUrl: FLOW,
    publicUrl: () => 'https://voice.example.com/',
    defaultFrom: opts.defaultFrom === undefined ? '+918012345678' : opts.defaultFrom,
    ...(opts.now ? { now: opts.now } : {}),
  });
}

const REQUEST = { to: '+919876543210', from: null, context: 'c1.body.sig', detectMachine: false };

describe('exotel placer', () => {
  it('places the call through Calls/connect with the flow, the context and our status callback', async () => {
    const exotel = await placer();
    expect(exotel).toMatchObject({ carrier: 'exotel', detectsMachines: false });
    const { callSid } = await exotel.place(REQUEST);
    const [request] = api!.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/Accounts/acme1/Calls/connect.json');
    expect(request!.authorization).toBe(`Basic ${Buffer.from('key:token').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(request!.body))).toEqual({
      From: '+919876543210',
      CallerId: '+918012345678',
      Url: FLOW,
      CustomField: 'c1.body.sig',
      StatusCallback: 'https://voice.example.com/carriers/exotel/status',
      TimeOut: '30',
    });
    // Kept for the applet's request, which may not carry CustomField.
    expect(exotel.contextOf!(callSid)).toBe('c1.body.sig');
    expect(exotel.contextOf!('another')).toBeNull();
  });

  it('uses the caller ID asked for over the default', async () => {
    const exotel = await placer();
    await exotel.place({ ...REQUEST, from: '+918099999999' });
    expect(new URLSearchParams(api!.requests[0]!.body).get('CallerId')).toBe('+918099999999');
  });

  it('forgets a context after ten minutes', async () => {
    let now = 1_000_000;
    const exotel = await placer({ now: () => now });
    const { callSid } = await exotel.place(REQUEST);
    now += 10 * 60_000 - 1;
    expect(exotel.contextOf!(callSid)).toBe('c1.body.sig');
    now += 1;
    expect(exotel.contextOf!(callSid)).toBeNull();
  });

  it('refuses answering-machine detection and a call with no caller ID, asking Exotel nothing', async () => {
    const exotel = await placer({ defaultFrom: null });
    const noCallerId = await exotel.place(REQUEST).catch((err: unknown) => err);
    expect(noCallerId).toBeInstanceOf(CarrierApiError);
    expect(noCallerId).toMatchObject({ retryable: false, message: expect.stringMatching(/no caller ID/) });
    const detection = await exotel
      .place({ ...REQUEST, from: '+918012345678', detectMachine: true })
      .catch((e: unknown) => e);
    expect(detection).toMatchObject({
      retryable: false,
      message: expect.stringMatching(/no answering-machine detection/),
    });
    expect(api!.requests).toEqual([]);
  });

  it.each([
    [429, true],
    [503, true],
    [400, false],
    [401, false],
  ])(
    'classifies an HTTP %i from Exotel as retryable: %s, quoting only its code',
    async (status, retryable) => {
      const exotel = await placer();
      api!.respond(() => ({
        status,
        body: { RestException: { Status: status, Code: 34001, Message: 'number +919876543210 bad' } },
      }));
      const err = await exotel.place(REQUEST).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CarrierApiError);
      expect(err).toMatchObject({ retryable, status });
      expect((err as Error).message).toBe(`exotel create call: HTTP ${status} (Exotel error 34001)`);
    },
  );

  it('refuses an answer without a call sid as not retryable: the call may exist', async () => {
    const exotel = await placer();
    api!.respond(() => ({ status: 200, body: { Call: {} } }));
    await expect(exotel.place(REQUEST)).rejects.toMatchObject({ retryable: false });
  });

  it('reads a call status back, and a call Exotel does not know as unknown', async () => {
    const exotel = await placer();
    expect(await exotel.status('abc')).toEqual({
      callSid: 'abc',
      status: 'completed',
      carrierStatus: 'completed',
    });
    api!.respond((req) =>
      req.path.endsWith('/busy1.json')
        ? { status: 200, body: { Call: { Sid: 'busy1', Status: 'busy' } } }
        : { status: 404, body: { RestException: { Status: 404 } } },
    );
    expect(await exotel.status('busy1')).toMatchObject({ status: 'busy' });
    expect(await exotel.status('gone')).toEqual({
      callSid: 'gone',
      status: 'unknown',
      carrierStatus: 'unknown',
    });
    expect(api!.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/Accounts/acme1/Calls/gone.json' });
  });

  it('hangs up without asking Exotel, which has no hang-up in this API', async () => {
    const exotel = await placer();
    await exotel.hangup('abc');
    expect(api!.requests).toEqual([]);
  });
});
