// A Plivo call over real sockets as far as this carrier goes: the signed answer URL, then the test
// helper's Audio Stream (as Plivo opens it on the <Stream> URL) against an endpoint running the
// Plivo codec.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LegEvent } from '../../../src/call/carrier-port.js';
import { createPlivoCodec } from '../../../src/carriers/plivo/codec.js';
import { plivoRoutes } from '../../../src/carriers/plivo/routes.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { type CodecSocketServer, startCodecSocket } from '../../helpers/codec-socket.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import {
  answerParams,
  openPlivoStream,
  type PlivoStreamClient,
  postPlivo,
} from '../../helpers/plivo-carrier.js';

const AUTH_TOKEN = 'plivo-auth-token-for-tests';
const PUBLIC_URL = 'https://bridge.example.com';
let media: CodecSocketServer;
let app: CarrierApp;
let intake: FakeIntake;
let client: PlivoStreamClient | undefined;

beforeEach(async () => {
  media = await startCodecSocket({ carrier: 'plivo', createCodec: createPlivoCodec });
  intake = createFakeIntake({ mediaBase: media.url });
  app = await startCarrierApp(
    plivoRoutes({
      intake,
      authToken: AUTH_TOKEN,
      refuseUnverified: false,
      publicUrl: () => PUBLIC_URL,
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
});

async function call() {
  const params = answerParams();
  const answer = await postPlivo(app.baseUrl, '/carriers/plivo/answer', params, {
    kind: 'valid',
    authToken: AUTH_TOKEN,
    publicUrl: PUBLIC_URL,
  });
  expect(answer.status).toBe(200);
  client = await openPlivoStream(answer.streamUrl, { callUuid: params.CallUUID! });
  const connection = await media.nextConnection();
  client.start();
  const start = (await connection.waitFor((e) => e.type === 'start')) as Extract<LegEvent, { type: 'start' }>;
  return { client, connection, start, params };
}

describe('plivo call over real sockets', () => {
  it('brings the stream token back in the path, for the call it was issued to', async () => {
    const { connection, start, params } = await call();
    expect(connection.path).toBe(`/media/plivo/i-1/${intake.prepared[0]!.token}`);
    expect(start).toMatchObject({ callSid: params.CallUUID });
    expect(start.token).toBeUndefined();
  });

  it('carries caller audio and DTMF; plays agent audio; checkpoints come back as marks, clears as cleared', async () => {
    const { client, connection } = await call();
    client.media(Buffer.from([1, 2, 3]));
    client.dtmf('*');
    connection.send(connection.codec.audio(Buffer.alloc(160, 0xff)));
    connection.send(connection.codec.mark('m-1'));
    connection.send(connection.codec.clear());
    await connection.waitFor((e) => e.type === 'cleared');
    await connection.waitFor((e) => e.type === 'mark');
    expect(connection.events).toEqual(
      expect.arrayContaining([
        { type: 'audio', payload: Buffer.from([1, 2, 3]) },
        { type: 'dtmf', digit: '*' },
        { type: 'mark', name: 'm-1' },
        { type: 'cleared' },
      ]),
    );
    expect(client.audio()).toEqual(Buffer.alloc(160, 0xff));
    expect(client.received.map((m) => m.event)).toEqual(['playAudio', 'checkpoint', 'clearAudio']);
    expect(connection.errors).toEqual([]);
  });
});
