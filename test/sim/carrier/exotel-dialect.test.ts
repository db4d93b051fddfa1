// The simulated Exotel against the project's Exotel routes and codec: what the sim sends, the codec
// reads; what the codec writes, the sim plays.
import { afterEach, describe, expect, it } from 'vitest';
import { createExotelCodec } from '../../../src/carriers/exotel/codec.js';
import { exotelRoutes } from '../../../src/carriers/exotel/routes.js';
import { basicAuthMatches, upgradeCredentials } from '../../../src/carriers/exotel/upgrade-auth.js';
import type { LegCodec } from '../../../src/call/carrier-port.js';
import type { SimStream } from '../../../src/sim/carrier/dialect.js';
import { exotelDialect, exotelNumber, readStreamUrl } from '../../../src/sim/carrier/dialects/exotel.js';
import { type CarrierApp, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';

const SECRET = 'stream-token-secret-of-the-exotel-dialect-test';

let server: CarrierApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(): Promise<{ intake: FakeIntake; baseUrl: string }> {
  const intake = createFakeIntake();
  server = await startCarrierApp(
    exotelRoutes({
      intake,
      credentialsFor: (token) => upgradeCredentials(SECRET, token),
      fromAllowedNetwork: null,
      refuseUnverified: false,
    }),
  );
  return { intake, baseUrl: server.baseUrl };
}

const spec = (baseUrl: string) => ({
  server: baseUrl,
  from: '+919876543210',
  to: '+918012345678',
  env: { EXOTEL_ACCOUNT_SID: 'acme1', EXOTEL_API_KEY: 'exotel-api-key' },
  timeoutMs: 2000,
});

async function streamFor(): Promise<{ stream: SimStream; intake: FakeIntake }> {
  const { intake, baseUrl } = await start();
  const answer = await exotelDialect.announce(spec(baseUrl));
  if (answer.kind !== 'stream') throw new Error(`expected a stream, got ${JSON.stringify(answer)}`);
  return { stream: answer.stream, intake };
}

/** A codec that has read the sim's opening, as the server's would. */
function openedCodec(stream: SimStream): LegCodec {
  const codec = createExotelCodec();
  for (const frame of stream.opening()) codec.parse(Buffer.from(frame as string), false);
  return codec;
}

describe('simulated Exotel', () => {
  it('fetches the stream URL and dials it with the Basic auth it carries', async () => {
    const { stream, intake } = await streamFor();
    const handedOut = new URL(intake.prepared[0]!.mediaUrl);
    const dialed = new URL(stream.url);
    expect(dialed.username).toBe('');
    expect(`${dialed.origin}${dialed.pathname}`).toBe(`${handedOut.origin}${handedOut.pathname}`);
    const credentials = upgradeCredentials(SECRET, intake.prepared[0]!.token);
    expect(basicAuthMatches(stream.headers.authorization, credentials.username, credentials.password)).toBe(
      true,
    );
    expect(stream.format).toEqual({ encoding: 'linear16', sampleRate: 8000, channels: 1 });
    expect(stream.callSid).toBe(intake.announced[0]!.callSid);
    expect(intake.announced[0]).toMatchObject({
      from: '+919876543210',
      to: '+918012345678',
      direction: 'inbound',
    });
  });

  it('hears a declined call as the refusal it is', async () => {
    const { intake, baseUrl } = await start();
    intake.admission = 'draining';
    expect(await exotelDialect.announce(spec(baseUrl))).toEqual({
      kind: 'declined',
      reason: expect.any(String),
    });
  });

  it('opens with connected and start, which the codec reads', async () => {
    const { stream } = await streamFor();
    const codec = createExotelCodec();
    expect(stream.opening().map((f) => codec.parse(Buffer.from(f as string), false))).toEqual([
      { type: 'ignored', event: 'connected' },
      {
        type: 'start',
        callSid: stream.callSid,
        streamSid: stream.streamSid,
        mediaFormat: { encoding: 'linear16', sampleRate: 8000, channels: 1 },
        token: undefined,
        parameters: {},
      },
    ]);
  });

  it('batches caller audio into 100 ms media messages the codec reads', async () => {
    const { stream } = await streamFor();
    const codec = openedCodec(stream);
    const frames = Array.from({ length: 5 }, (_, i) => Buffer.alloc(320, i + 1));
    for (const frame of frames.slice(0, 4)) expect(stream.callerAudio(frame)).toEqual([]);
    const [message] = stream.callerAudio(frames[4]!);
    // The frames' own bytes, in order: nothing converted.
    expect(codec.parse(Buffer.from(message as string), false)).toEqual({
      type: 'audio',
      payload: Buffer.concat(frames),
    });
  });

  it('sends DTMF the codec reads', async () => {
    const { stream } = await streamFor();
    expect(openedCodec(stream).parse(Buffer.from(stream.dtmf('9') as string), false)).toEqual({
      type: 'dtmf',
      digit: '9',
    });
  });

  it("plays the codec's media, and warns of chunks Exotel would play with gaps", async () => {
    const { stream } = await streamFor();
    const codec = openedCodec(stream);
    const chunk = Buffer.alloc(3200, 7);
    const played = stream.serverFrame(Buffer.from(codec.audio(chunk) as string), false);
    expect(played).toEqual([{ type: 'audio', payload: chunk }]);
    const short = stream.serverFrame(Buffer.from(codec.audio(Buffer.alloc(640)) as string), false);
    expect(short[0]).toEqual({
      type: 'warning',
      message: expect.stringMatching(/multiples of 320 bytes from 3,200/),
    });
    expect(short[1]).toMatchObject({ type: 'audio' });
  });

  it("echoes the codec's mark once played, and the codec reads it", async () => {
    const { stream } = await streamFor();
    const codec = openedCodec(stream);
    expect(stream.serverFrame(Buffer.from(codec.mark('m-1') as string), false)).toEqual([
      { type: 'mark', name: 'm-1' },
    ]);
    expect(codec.parse(Buffer.from(stream.markPlayed('m-1') as string), false)).toEqual({
      type: 'mark',
      name: 'm-1',
    });
  });

  it("clears on the codec's clear; Exotel sends no confirmation", async () => {
    const { stream } = await streamFor();
    const codec = openedCodec(stream);
    expect(stream.serverFrame(Buffer.from(codec.clear() as string), false)).toEqual([{ type: 'clear' }]);
    expect(stream.cleared()).toBeNull();
  });

  it('ends with stop, which the codec reads', async () => {
    const { stream } = await streamFor();
    expect(openedCodec(stream).parse(Buffer.from(stream.stop() as string), false)).toEqual({ type: 'stop' });
  });

  it('ignores frames for another stream or of unknown kinds, warning once', async () => {
    const { stream } = await streamFor();
    expect(stream.serverFrame(Buffer.from('{"event":"clear","stream_sid":"other"}'), false)[0]).toMatchObject(
      {
        type: 'warning',
      },
    );
    expect(stream.serverFrame(Buffer.from([1, 2]), true)[0]).toMatchObject({ type: 'warning' });
    expect(stream.serverFrame(Buffer.from([1, 2]), true)).toEqual([]);
  });

  it('posts a status callback after the hang-up', async () => {
    const { stream, intake } = await streamFor();
    await stream.afterHangup!();
    expect(intake.refusals).toEqual([]);
    expect(server!.answered.at(-1)).toBe('POST /carriers/exotel/status 204');
  });
});

describe('readStreamUrl', () => {
  it('turns credentials into Basic auth and the query into the rate and custom parameters', () => {
    const target = readStreamUrl(
      'wss://k%40y:p%3Ass@h.example/media/exotel/i/t?sample-rate=16000&a=1&b=2&c=3&d=4',
    );
    expect(target).toEqual({
      url: 'wss://h.example/media/exotel/i/t?sample-rate=16000&a=1&b=2&c=3&d=4',
      authorization: `Basic ${Buffer.from('k@y:p:ss').toString('base64')}`,
      sampleRate: 16000,
      customParameters: { a: '1', b: '2', c: '3' },
    });
  });

  it('refuses what Exotel cannot dial', () => {
    expect(readStreamUrl('https://h.example/x')).toHaveProperty('error');
    expect(readStreamUrl('not a url')).toHaveProperty('error');
    expect(readStreamUrl('wss://h.example/x?sample-rate=44100')).toHaveProperty('error');
  });
});

describe('exotelNumber', () => {
  it('writes Indian numbers with the trunk 0, as Exotel does, and others as given', () => {
    expect(exotelNumber('+919876543210')).toBe('09876543210');
    expect(exotelNumber('+15550100')).toBe('+15550100');
  });
});
