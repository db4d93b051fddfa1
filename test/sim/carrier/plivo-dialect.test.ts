// The simulated phone playing Plivo, against the real Plivo routes (on a bare Fastify app with a
// fake intake); then its media stream against the server's Plivo codec, both ways.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transcode } from '../../../src/audio/codec.js';
import type { MediaFormat } from '../../../src/audio/format.js';
import type { LegEvent } from '../../../src/call/carrier-port.js';
import { createPlivoCodec } from '../../../src/carriers/plivo/codec.js';
import { plivoRoutes } from '../../../src/carriers/plivo/routes.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import type { SimAnswer, SimStream } from '../../../src/sim/carrier/dialect.js';
import { plivoDialect } from '../../../src/sim/carrier/dialects/plivo.js';
import { createPlivoSimStream } from '../../../src/sim/carrier/dialects/plivo-stream.js';
import { readPlivoContentType, readPlivoXml } from '../../../src/sim/carrier/dialects/plivo-xml.js';
import { type CarrierApp, sinkLogger, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';

const AUTH_TOKEN = 'plivo-auth-token-for-tests';

let app: CarrierApp | undefined;
let intake: FakeIntake;
let logLines: string[];

beforeEach(() => {
  intake = createFakeIntake({ mediaBase: 'ws://127.0.0.1:9' });
  logLines = [];
});

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** The server signs over its public URL: here, the address it listens on, known once listening. */
async function startServer(authToken: string | null = AUTH_TOKEN): Promise<string> {
  let publicUrl = '';
  app = await startCarrierApp(
    plivoRoutes({
      intake,
      authToken,
      refuseUnverified: false,
      publicUrl: () => publicUrl,
      logger: sinkLogger(logLines),
      metrics: createMetrics('global'),
      now: Date.now,
    }),
  );
  publicUrl = app.baseUrl;
  return app.baseUrl;
}

function spec(server: string, env: Record<string, string | undefined>) {
  return { server, from: '+15005550006', to: '+15005550001', env, timeoutMs: 3000 };
}

function streamOf(answer: SimAnswer): SimStream {
  if (answer.kind !== 'stream') throw new Error(`expected a stream, got ${JSON.stringify(answer)}`);
  return answer.stream;
}

describe('plivo dialect: announcing a call', () => {
  it('says how it signs', () => {
    expect(plivoDialect.describeSigning({})).toBe('unsigned: PLIVO_AUTH_TOKEN not set');
    expect(plivoDialect.describeSigning({ PLIVO_AUTH_TOKEN: 't' })).toBe('signed with X-Plivo-Signature-V3');
  });

  it('posts a signed answer URL and opens the <Stream> it names', async () => {
    const server = await startServer();
    const answer = await plivoDialect.announce(spec(server, { PLIVO_AUTH_TOKEN: AUTH_TOKEN }));
    const stream = streamOf(answer);
    expect(answer).toMatchObject({ warnings: [], observerToken: intake.prepared[0]!.observerToken });
    expect(stream.url).toBe(intake.prepared[0]!.mediaUrl);
    expect(stream.format).toEqual({ encoding: 'mulaw', sampleRate: 8000, channels: 1 });
    // Plivo writes numbers without the +; the server routes them as E.164.
    expect(intake.announced[0]).toMatchObject({
      from: '+15005550006',
      to: '+15005550001',
      callSid: stream.callSid,
    });
  });

  it('is refused when the server verifies and the phone does not sign', async () => {
    const server = await startServer();
    const answer = await plivoDialect.announce(spec(server, {}));
    expect(answer).toMatchObject({ kind: 'failed', error: expect.stringContaining('HTTP 403') });
  });

  it('hears the polite decline', async () => {
    intake.admission = 'draining';
    const server = await startServer();
    expect(await plivoDialect.announce(spec(server, { PLIVO_AUTH_TOKEN: AUTH_TOKEN }))).toEqual({
      kind: 'declined',
      reason: 'hung up',
      say: intake.decline.message,
    });
  });

  it('reports a redirect as a decline', async () => {
    intake.admission = 'at_capacity';
    intake.decline = { message: 'busy', redirectUrl: 'https://overflow.example.com/x' };
    const server = await startServer(null);
    expect(await plivoDialect.announce(spec(server, {}))).toMatchObject({
      kind: 'declined',
      reason: 'redirected to https://overflow.example.com/x',
    });
  });

  it('posts the signed hang-up and stream status after the stream ends', async () => {
    const server = await startServer();
    const stream = streamOf(await plivoDialect.announce(spec(server, { PLIVO_AUTH_TOKEN: AUTH_TOKEN })));
    await stream.afterHangup!();
    expect(logLines.some((line) => line.includes('plivo stream status') && line.includes('StopStream'))).toBe(
      true,
    );
    expect(logLines.some((line) => line.includes('plivo call hung up'))).toBe(true);
  });
});

describe('plivo dialect: reading the XML', () => {
  it('reads stream, speak, redirect and bare hang-up answers', () => {
    expect(
      readPlivoXml(
        '<Response><Stream bidirectional="true" extraHeaders="a=1">wss://h/m?x=1&amp;y=2</Stream></Response>',
      ),
    ).toEqual({
      kind: 'stream',
      url: 'wss://h/m?x=1&y=2',
      attributes: { bidirectional: 'true', extraHeaders: 'a=1' },
    });
    expect(readPlivoXml('<Response><Speak>a &amp; b</Speak><Hangup/></Response>')).toEqual({
      kind: 'declined',
      say: 'a & b',
      reason: 'hung up',
    });
    expect(readPlivoXml('<Response/>')).toMatchObject({
      kind: 'declined',
      reason: 'the answer has no <Stream>',
    });
  });

  it('knows the content types Plivo streams', () => {
    expect(readPlivoContentType('audio/x-mulaw;rate=8000')).toEqual({ encoding: 'mulaw', sampleRate: 8000 });
    expect(readPlivoContentType('audio/x-l16; rate=16000')).toEqual({
      encoding: 'linear16',
      sampleRate: 16000,
    });
    expect(readPlivoContentType('audio/x-mulaw;rate=16000')).toBeUndefined();
    expect(readPlivoContentType('audio/opus')).toBeUndefined();
  });
});

describe('plivo dialect: the stream against the server codec', () => {
  const MULAW_FRAME = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 5) & 0xff));

  function pair(format: MediaFormat = { encoding: 'mulaw', sampleRate: 8000, channels: 1 }) {
    const stream = createPlivoSimStream({
      url: 'ws://x/media/plivo/i/t',
      callSid: 'c-1',
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      format,
      extraHeaders: 'campaign=c1',
    });
    const codec = createPlivoCodec();
    const parse = (frame: string | Buffer): LegEvent => codec.parse(Buffer.from(frame), false) as LegEvent;
    const opened = stream.opening().map(parse);
    return { stream, codec, parse, opened };
  }

  it('opens with a start the codec reads', () => {
    const { opened, stream } = pair();
    expect(opened).toEqual([
      {
        type: 'start',
        callSid: 'c-1',
        streamSid: stream.streamSid,
        mediaFormat: { encoding: 'mulaw', sampleRate: 8000, channels: 1 },
        parameters: { campaign: 'c1' },
      },
    ]);
  });

  it('carries caller audio, dtmf, playedStream, clearedAudio and stop to the codec', () => {
    const { stream, parse } = pair();
    expect(stream.callerAudio(MULAW_FRAME).map(parse)).toEqual([{ type: 'audio', payload: MULAW_FRAME }]);
    expect(parse(stream.dtmf('#'))).toEqual({ type: 'dtmf', digit: '#' });
    expect(parse(stream.markPlayed('m-1'))).toEqual({ type: 'mark', name: 'm-1' });
    expect(parse(stream.cleared()!)).toEqual({ type: 'cleared' });
    expect(parse(stream.stop()!)).toEqual({ type: 'stop' });
  });

  it('plays what the codec writes: playAudio, checkpoint, clearAudio, without warnings', () => {
    const { stream, codec } = pair();
    expect(stream.serverFrame(Buffer.from(codec.audio(MULAW_FRAME)), false)).toEqual([
      { type: 'audio', payload: MULAW_FRAME },
    ]);
    expect(stream.serverFrame(Buffer.from(codec.mark('m-2')), false)).toEqual([
      { type: 'mark', name: 'm-2' },
    ]);
    expect(stream.serverFrame(Buffer.from(codec.clear()), false)).toEqual([{ type: 'clear' }]);
  });

  it('round-trips L16 at 16 kHz', () => {
    const { stream, parse, codec } = pair({ encoding: 'linear16', sampleRate: 16000, channels: 1 });
    const pcm = transcode(
      MULAW_FRAME,
      { encoding: 'mulaw', sampleRate: 8000 },
      { encoding: 'linear16', sampleRate: 16000 },
    );
    expect(stream.callerAudio(pcm).map(parse)).toEqual([{ type: 'audio', payload: pcm }]);
    expect(stream.serverFrame(Buffer.from(codec.audio(pcm)), false)).toEqual([
      { type: 'audio', payload: pcm },
    ]);
  });

  it('warns about what Plivo would ignore', () => {
    const { stream } = pair();
    const other = JSON.stringify({ event: 'checkpoint', streamId: 'another', name: 'm' });
    expect(stream.serverFrame(Buffer.from(other), false)).toEqual([
      { type: 'warning', message: expect.stringContaining("without this stream's streamId") },
    ]);
    const wrongFormat = JSON.stringify({
      event: 'playAudio',
      media: { contentType: 'audio/x-l16', sampleRate: 8000, payload: 'AAA=' },
    });
    expect(stream.serverFrame(Buffer.from(wrongFormat), false).map((e) => e.type)).toEqual([
      'warning',
      'audio',
    ]);
    expect(stream.serverFrame(Buffer.from('{}'), true)[0]).toMatchObject({ type: 'warning' });
  });
});
