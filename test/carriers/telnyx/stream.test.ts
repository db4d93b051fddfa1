// A Telnyx call over real sockets as far as this carrier goes: the signed webhook to the routes,
// the answer through the simulated carrier API, then the test helper's media stream (as Telnyx
// opens it on the answer's stream_url) against an endpoint running the Telnyx codec.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LegEvent } from '../../../src/call/carrier-port.js';
import { createTelnyxCodec } from '../../../src/carriers/telnyx/codec.js';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
import { telnyxRoutes } from '../../../src/carriers/telnyx/routes.js';
import { importTelnyxPublicKeys } from '../../../src/carriers/telnyx/signature.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { type CodecSocketServer, startCodecSocket } from '../../helpers/codec-socket.js';
import { startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import {
  announceTelnyxCall,
  answerFromRecordedRequests,
  answerFromSimulatedApi,
  openTelnyxStream,
  type TelnyxStreamClient,
  telnyxAccount,
} from '../../helpers/telnyx-carrier.js';

const account = telnyxAccount();
let sim: SimulatedCarrierApi;
let media: CodecSocketServer;
let app: CarrierApp;
let intake: FakeIntake;
let client: TelnyxStreamClient | undefined;

beforeEach(async () => {
  sim = await startSimulatedCarrierApi();
  media = await startCodecSocket({ carrier: 'telnyx', createCodec: () => createTelnyxCodec() });
  intake = createFakeIntake({ mediaBase: media.url });
  app = await startCarrierApp(
    telnyxRoutes({
      intake,
      rest: createTelnyxRest({ apiUrl: sim.url, apiKey: 'simulated', connectionId: null, timeoutMs: 2000 }),
      publicKeys: importTelnyxPublicKeys([account.publicKey]),
      refuseUnverified: false,
      codec: 'PCMU',
      logger: sinkLogger([]),
      metrics: createMetrics('global'),
      now: Date.now,
    }),
  );
});

afterEach(async () => {
  client?.ws.terminate();
  client = undefined;
  await app.close();
  await media.close();
  await sim.close();
});

async function call() {
  const announced = await announceTelnyxCall(app.baseUrl, answerFromSimulatedApi(sim.url), {
    kind: 'valid',
    account,
  });
  expect(announced.status).toBe(200);
  client = await openTelnyxStream(announced.streamUrl, { callControlId: announced.callControlId });
  const connection = await media.nextConnection();
  client.start({ clientState: announced.clientState });
  const start = (await connection.waitFor((e) => e.type === 'start')) as Extract<LegEvent, { type: 'start' }>;
  return { announced, client, connection, start };
}

describe('telnyx call over real sockets', () => {
  it('brings the stream token back both in the path and in start, for the call it was issued to', async () => {
    const { connection, start, announced } = await call();
    const token = intake.prepared[0]!.token;
    expect(connection.path).toBe(`/media/telnyx/i-1/${token}`);
    expect(start).toMatchObject({ callSid: announced.callControlId, token });
    expect(start.callSid).toBe(intake.announced[0]!.callSid);
  });

  it('carries caller audio in order even when frames arrive shuffled', async () => {
    const { client, connection } = await call();
    const base = client.nextSequence();
    const order = [0, 2, 1, 3, 5, 4];
    for (const i of order) client.media(Buffer.from([i]), { sequence: base + i });
    client.stop();
    await connection.waitFor((e) => e.type === 'stop');
    const audio = connection.events.filter((e) => e.type === 'audio') as Array<{ payload: Buffer }>;
    expect(audio.map((e) => e.payload[0])).toEqual([0, 1, 2, 3, 4, 5]);
    expect(connection.errors).toEqual([]);
  });

  it('plays agent audio, echoes marks, takes clear, and passes DTMF', async () => {
    const { client, connection } = await call();
    connection.send(connection.codec.audio(Buffer.alloc(160, 0x7f)));
    connection.send(connection.codec.mark('m-1'));
    connection.send(connection.codec.clear());
    client.dtmf('5');
    await connection.waitFor((e) => e.type === 'mark');
    await connection.waitFor((e) => e.type === 'dtmf');
    expect(connection.events).toContainEqual({ type: 'mark', name: 'm-1' });
    expect(connection.events).toContainEqual({ type: 'dtmf', digit: '5' });
    expect(client.audio()).toEqual(Buffer.alloc(160, 0x7f));
    expect(client.received.map((m) => m.event)).toEqual(['media', 'mark', 'clear']);
  });

  it('finds the answer among the requests of a fake API too', async () => {
    const api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
    try {
      const routes = telnyxRoutes({
        intake,
        rest: createTelnyxRest({ apiUrl: api.url, apiKey: 'k', connectionId: null, timeoutMs: 2000 }),
        publicKeys: importTelnyxPublicKeys([account.publicKey]),
        refuseUnverified: false,
        codec: 'PCMU',
        logger: sinkLogger([]),
        metrics: createMetrics('global'),
        now: Date.now,
      });
      const other = await startCarrierApp(routes);
      try {
        const announced = await announceTelnyxCall(other.baseUrl, answerFromRecordedRequests(api.requests), {
          kind: 'valid',
          account,
        });
        expect(announced.streamUrl).toBe(intake.prepared[0]!.mediaUrl);
      } finally {
        await other.close();
      }
    } finally {
      await api.close();
    }
  });

  it('reads an error frame as nothing for the call', async () => {
    const { client, connection } = await call();
    client.error(100003, 'Media stream failed');
    client.stop();
    await connection.waitFor((e) => e.type === 'stop');
    expect(connection.events).toContainEqual({ type: 'ignored', event: 'error' });
  });
});
