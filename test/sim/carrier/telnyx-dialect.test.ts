// The simulated phone playing Telnyx, against the real Telnyx routes (on a bare Fastify app with a
// fake intake) answering through the real simulated carrier API; then its media stream against the
// server's Telnyx codec, both ways.
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeMulaw, transcode } from '../../../src/audio/codec.js';
import type { LegEvent } from '../../../src/call/carrier-port.js';
import { createTelnyxCodec } from '../../../src/carriers/telnyx/codec.js';
import { createTelnyxRest } from '../../../src/carriers/telnyx/rest.js';
import { telnyxRoutes } from '../../../src/carriers/telnyx/routes.js';
import { importTelnyxPublicKeys } from '../../../src/carriers/telnyx/signature.js';
import type { TelnyxStreamCodec } from '../../../src/carriers/telnyx/config.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { type SimulatedCarrierApi, startSimulatedCarrierApi } from '../../../src/sim/carrier-api/server.js';
import type { SimAnswer, SimStream } from '../../../src/sim/carrier/dialect.js';
import { telnyxDialect } from '../../../src/sim/carrier/dialects/telnyx.js';
import { createTelnyxSimStream } from '../../../src/sim/carrier/dialects/telnyx-stream.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';
import { telnyxAccount } from '../../helpers/telnyx-carrier.js';

const account = telnyxAccount();

let sim: SimulatedCarrierApi;
let app: CarrierApp | undefined;
let intake: FakeIntake;
let logLines: string[];

beforeEach(async () => {
  sim = await startSimulatedCarrierApi();
  intake = createFakeIntake({ mediaBase: 'ws://127.0.0.1:9' });
  logLines = [];
});

afterEach(async () => {
  await app?.close();
  app = undefined;
  await sim.close();
});

async function startServer(
  opts: { verify?: boolean; announceApi?: boolean; codec?: TelnyxStreamCodec } = {},
) {
  const routes = telnyxRoutes({
    intake,
    rest: createTelnyxRest({ apiUrl: sim.url, apiKey: 'simulated', connectionId: null, timeoutMs: 2000 }),
    publicKeys: opts.verify === false ? [] : importTelnyxPublicKeys([account.publicKey]),
    refuseUnverified: false,
    codec: opts.codec ?? 'PCMU',
    logger: sinkLogger(logLines),
    metrics: createMetrics('global'),
    now: Date.now,
  });
  app = await startCarrierApp(async (scope: FastifyInstance) => {
    if (opts.announceApi !== false)
      scope.get('/', async () => ({ name: 'callbridge', simulatedCarrierApi: sim.url }));
    await scope.register(routes);
  });
  return app.baseUrl;
}

const signedEnv = () => ({
  TELNYX_PUBLIC_KEY: account.publicKey,
  CALLBRIDGE_SIM_TELNYX_PRIVATE_KEY: account.privateSeed,
});

function spec(server: string, env: Record<string, string | undefined>) {
  return { server, from: '+15005550006', to: '+15005550001', env, timeoutMs: 3000 };
}

function streamOf(answer: SimAnswer): SimStream {
  if (answer.kind !== 'stream') throw new Error(`expected a stream, got ${JSON.stringify(answer)}`);
  return answer.stream;
}

describe('telnyx dialect: announcing a call', () => {
  it('says how it signs', () => {
    expect(telnyxDialect.describeSigning({})).toBe('unsigned: TELNYX_PUBLIC_KEY not set');
    expect(telnyxDialect.describeSigning(signedEnv())).toBe('signed with Ed25519');
    expect(telnyxDialect.describeSigning({ TELNYX_PUBLIC_KEY: account.publicKey })).toMatch(
      /server will refuse/,
    );
    expect(
      telnyxDialect.describeSigning({ ...signedEnv(), TELNYX_PUBLIC_KEY: telnyxAccount().publicKey }),
    ).toMatch(/is not the key of TELNYX_PUBLIC_KEY/);
    expect(telnyxDialect.describeSigning({ CALLBRIDGE_SIM_TELNYX_PRIVATE_KEY: 'short' })).toMatch(/32-byte/);
  });

  it('posts a signed call.initiated and opens the stream the server answered with', async () => {
    const server = await startServer();
    const answer = await telnyxDialect.announce(spec(server, signedEnv()));
    const stream = streamOf(answer);
    expect(answer).toMatchObject({ warnings: [] });
    expect(stream.url).toBe(intake.prepared[0]!.mediaUrl);
    expect(stream.format).toEqual({ encoding: 'mulaw', sampleRate: 8000, channels: 1 });
    expect(stream.callSid).toBe(intake.announced[0]!.callSid);
    expect(intake.announced[0]).toMatchObject({
      from: '+15005550006',
      to: '+15005550001',
      direction: 'inbound',
    });
  });

  it('finds the simulated carrier API in the environment when the server does not name it', async () => {
    const server = await startServer({ announceApi: false });
    const answer = await telnyxDialect.announce(
      spec(server, { ...signedEnv(), CALLBRIDGE_SIM_CARRIER_API: sim.url }),
    );
    expect(answer.kind).toBe('stream');
  });

  it('fails with the reason when no simulated carrier API is named', async () => {
    const server = await startServer({ announceApi: false });
    const answer = await telnyxDialect.announce(spec(server, signedEnv()));
    expect(answer).toMatchObject({
      kind: 'failed',
      error: expect.stringContaining('CALLBRIDGE_SIM_CARRIER_API'),
    });
    expect(intake.announced).toEqual([]);
  });

  it('is refused, and says why, when the server verifies and the phone cannot sign', async () => {
    const server = await startServer();
    const answer = await telnyxDialect.announce(spec(server, { TELNYX_PUBLIC_KEY: account.publicKey }));
    expect(answer).toMatchObject({ kind: 'failed' });
    expect((answer as { error: string }).error).toMatch(/HTTP 403.*CALLBRIDGE_SIM_TELNYX_PRIVATE_KEY/);
  });

  it('gets no answer from an unverified server: an unsigned webhook causes no API call', async () => {
    const server = await startServer({ verify: false });
    expect((await telnyxDialect.announce(spec(server, {}))).kind).toBe('failed');
    expect(sim.calls.list(10).flatMap((call) => call.requests)).toEqual([]);
    expect(intake.prepared).toEqual([]);
  });

  it('hears the polite decline: answered, spoken to, hung up', async () => {
    intake.admission = 'at_capacity';
    const server = await startServer();
    const answer = await telnyxDialect.announce(spec(server, signedEnv()));
    expect(answer).toEqual({
      kind: 'declined',
      reason: 'answered without a media stream',
      say: intake.decline.message,
    });
    const call = sim.calls.list(1)[0]!;
    expect(call.requests.map((r) => r.action)).toEqual(['answer', 'speak', 'hangup']);
  });

  it('hears a decline played from a recording: answered, played to, hung up', async () => {
    intake.admission = 'draining';
    intake.decline.audioUrl = 'https://bridge.example.com/prompts/at_capacity.wav';
    const server = await startServer();
    const answer = await telnyxDialect.announce(spec(server, signedEnv()));
    expect(answer).toEqual({
      kind: 'declined',
      reason: 'answered without a media stream',
      say: '(the recording at https://bridge.example.com/prompts/at_capacity.wav)',
    });
    const call = sim.calls.list(1)[0]!;
    expect(call.requests.map((r) => r.action)).toEqual(['answer', 'playback_start', 'hangup']);
  });

  it('reads an L16 answer as 16 kHz linear PCM', async () => {
    const server = await startServer({ codec: 'L16' });
    const stream = streamOf(await telnyxDialect.announce(spec(server, signedEnv())));
    expect(stream.format).toEqual({ encoding: 'linear16', sampleRate: 16000, channels: 1 });
  });

  it('posts call.hangup after the stream ends', async () => {
    const server = await startServer();
    const stream = streamOf(await telnyxDialect.announce(spec(server, signedEnv())));
    await stream.afterHangup!();
    expect(logLines.some((line) => line.includes('telnyx call hung up'))).toBe(true);
  });
});

describe('telnyx dialect: the stream against the server codec', () => {
  const MULAW_FRAME = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 7) & 0xff));

  function pair(encoding: 'PCMU' | 'PCMA' | 'L16' = 'PCMU') {
    const format =
      encoding === 'PCMU'
        ? ({ encoding: 'mulaw', sampleRate: 8000, channels: 1 } as const)
        : encoding === 'PCMA'
          ? ({ encoding: 'alaw', sampleRate: 8000, channels: 1 } as const)
          : ({ encoding: 'linear16', sampleRate: 16000, channels: 1 } as const);
    const stream = createTelnyxSimStream({
      url: 'ws://x/media/telnyx/i/t',
      callSid: 'v3:call-1',
      from: '+1',
      to: '+2',
      format,
      clientState: Buffer.from(JSON.stringify({ cb: 1, token: 'tok-1' })).toString('base64'),
    });
    const codec = createTelnyxCodec();
    const parse = (frame: string | Buffer): LegEvent[] => {
      const result = codec.parse(Buffer.from(frame), false);
      return Array.isArray(result) ? [...result] : [result as LegEvent];
    };
    const opened = stream.opening().flatMap(parse);
    return { stream, codec, parse, opened, format };
  }

  it('opens with connected and a start the codec reads, the token back from client_state', () => {
    const { opened, stream } = pair();
    expect(opened).toEqual([
      { type: 'ignored', event: 'connected' },
      {
        type: 'start',
        callSid: 'v3:call-1',
        streamSid: stream.streamSid,
        mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
        token: 'tok-1',
        parameters: {},
      },
    ]);
  });

  it('carries caller audio, dtmf, mark echoes and stop to the codec', () => {
    const { stream, parse } = pair();
    expect(stream.callerAudio(MULAW_FRAME).flatMap(parse)).toEqual([{ type: 'audio', payload: MULAW_FRAME }]);
    expect(parse(stream.dtmf('9'))).toEqual([{ type: 'dtmf', digit: '9' }]);
    expect(parse(stream.markPlayed('m-1'))).toEqual([{ type: 'mark', name: 'm-1' }]);
    expect(stream.cleared()).toBeNull();
    expect(parse(stream.stop()!)).toEqual([{ type: 'stop' }]);
  });

  it('plays what the codec writes: audio, mark, clear', () => {
    const { stream, codec } = pair();
    const agent = Buffer.from(MULAW_FRAME);
    expect(stream.serverFrame(Buffer.from(codec.audio(agent)), false)).toEqual([
      { type: 'audio', payload: agent },
    ]);
    expect(stream.serverFrame(Buffer.from(codec.mark('m-2')), false)).toEqual([
      { type: 'mark', name: 'm-2' },
    ]);
    expect(stream.serverFrame(Buffer.from(codec.clear()), false)).toEqual([{ type: 'clear' }]);
  });

  it('round-trips A-law', () => {
    const { stream, parse } = pair('PCMA');
    const alaw = transcode(
      MULAW_FRAME,
      { encoding: 'mulaw', sampleRate: 8000 },
      { encoding: 'alaw', sampleRate: 8000 },
    );
    const [event] = stream.callerAudio(alaw).flatMap(parse);
    expect(event).toEqual({ type: 'audio', payload: alaw });
  });

  it("sends L16 big-endian, which the codec turns into little-endian, and plays the codec's L16 back", () => {
    const { stream, parse, codec } = pair('L16');
    const expected = transcode(
      MULAW_FRAME,
      { encoding: 'mulaw', sampleRate: 8000 },
      { encoding: 'linear16', sampleRate: 16000 },
    );
    const [event] = stream.callerAudio(expected).flatMap(parse);
    expect(event).toEqual({ type: 'audio', payload: expected });
    const [played] = stream.serverFrame(Buffer.from(codec.audio(expected)), false);
    expect(played).toEqual({ type: 'audio', payload: expected });
  });

  it('warns about what Telnyx would not take', () => {
    const { stream } = pair();
    expect(stream.serverFrame(Buffer.from([1, 2]), true)[0]).toMatchObject({ type: 'warning' });
    expect(stream.serverFrame(Buffer.from('nope'), false)[0]).toMatchObject({ type: 'warning' });
    expect(stream.serverFrame(Buffer.from('{"event":"fly"}'), false)[0]).toMatchObject({ type: 'warning' });
    const tiny = JSON.stringify({
      event: 'media',
      media: { payload: encodeMulaw(new Int16Array(8)).toString('base64') },
    });
    expect(stream.serverFrame(Buffer.from(tiny), false).map((e) => e.type)).toEqual(['warning', 'audio']);
  });

  it('numbers its frames in order, as strings', () => {
    const { stream } = pair();
    const numbers = [...stream.callerAudio(MULAW_FRAME), stream.dtmf('1'), stream.markPlayed('m')].map(
      (frame) => (JSON.parse(String(frame)) as { sequence_number: string }).sequence_number,
    );
    expect(numbers).toEqual(['2', '3', '4']);
  });
});
