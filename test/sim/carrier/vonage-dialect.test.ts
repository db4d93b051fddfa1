// The simulated Vonage against the project's Vonage routes and codec: what the sim sends, the codec
// reads; what the codec writes, the sim plays.
import { afterEach, describe, expect, it } from 'vitest';
import { createVonageCodec } from '../../../src/carriers/vonage/codec.js';
import { vonageRoutes } from '../../../src/carriers/vonage/routes.js';
import type { SimStream } from '../../../src/sim/carrier/dialect.js';
import { vonageDialect } from '../../../src/sim/carrier/dialects/vonage.js';
import { type CarrierApp, startCarrierApp } from '../../helpers/carrier-app.js';
import { createFakeIntake, type FakeIntake } from '../../helpers/fake-intake.js';

const SECRET = 'vonage-signature-secret-for-tests-0001';

let server: CarrierApp | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(secrets: string[] = []): Promise<{ intake: FakeIntake; baseUrl: string }> {
  const intake = createFakeIntake();
  server = await startCarrierApp(
    vonageRoutes({
      intake,
      signatureSecrets: secrets,
      applicationId: null,
      apiKey: null,
      refuseUnverified: false,
    }),
  );
  return { intake, baseUrl: server.baseUrl };
}

const spec = (baseUrl: string, env: Record<string, string> = {}) => ({
  server: baseUrl,
  from: '+447700900000',
  to: '+447700900001',
  env,
  timeoutMs: 2000,
});

async function streamFor(env: Record<string, string> = {}, secrets: string[] = []) {
  const { intake, baseUrl } = await start(secrets);
  const answer = await vonageDialect.announce(spec(baseUrl, env));
  if (answer.kind !== 'stream') throw new Error(`expected a stream, got ${JSON.stringify(answer)}`);
  return { stream: answer.stream, intake, answer };
}

function readAll(stream: SimStream, frames: Array<string | Buffer>) {
  const codec = createVonageCodec();
  return {
    codec,
    events: frames.map((f) => codec.parse(Buffer.isBuffer(f) ? f : Buffer.from(f), Buffer.isBuffer(f))),
  };
}

describe('simulated Vonage', () => {
  it('announces a call the routes answer, and opens the stream the NCCO names', async () => {
    const { stream, intake, answer } = await streamFor();
    const [prepared] = intake.prepared;
    expect(stream.url).toBe(prepared!.mediaUrl);
    expect(stream.headers).toEqual({});
    expect(stream.format).toEqual({ encoding: 'linear16', sampleRate: 16000, channels: 1 });
    expect(stream.callSid).toBe(intake.announced[0]!.callSid);
    expect(intake.announced[0]).toMatchObject({
      from: '+447700900000',
      to: '+447700900001',
      direction: 'inbound',
    });
    expect(answer.kind === 'stream' && (answer.observerToken ?? null)).toBe(prepared!.observerToken);
  });

  it('signs its webhooks as Vonage does when the secret is in the environment', async () => {
    const { intake } = await streamFor({ VONAGE_SIGNATURE_SECRET: SECRET }, [SECRET]);
    expect(intake.refusals).toEqual([]);
    expect(vonageDialect.describeSigning({ VONAGE_SIGNATURE_SECRET: SECRET })).toMatch(/signed/);
  });

  it('reports a webhook the server refuses', async () => {
    const { baseUrl } = await start([SECRET]);
    const answer = await vonageDialect.announce(spec(baseUrl));
    expect(answer).toEqual({ kind: 'failed', error: expect.stringMatching(/HTTP 403/) });
  });

  it('hears a declined call as the talk action', async () => {
    const { intake, baseUrl } = await start();
    intake.admission = 'at_capacity';
    expect(await vonageDialect.announce(spec(baseUrl))).toEqual({
      kind: 'declined',
      reason: expect.any(String),
      say: intake.decline.message,
    });
  });

  it('opens with websocket:connected, which the codec reads as start with the token', async () => {
    const { stream, intake } = await streamFor();
    const { events } = readAll(stream, stream.opening());
    expect(events).toEqual([
      {
        type: 'start',
        callSid: stream.callSid,
        streamSid: stream.callSid,
        mediaFormat: { encoding: 'linear16', sampleRate: 16000, channels: 1 },
        token: intake.prepared[0]!.token,
        parameters: { call_uuid: stream.callSid },
      },
    ]);
  });

  it('sends each 20 ms of caller audio as one 640-byte binary frame the codec reads', async () => {
    const { stream } = await streamFor();
    const pcm = Buffer.alloc(640, 3);
    const frames = stream.callerAudio(pcm);
    expect(frames).toHaveLength(1);
    expect(Buffer.isBuffer(frames[0])).toBe(true);
    expect(readAll(stream, frames).events).toEqual([{ type: 'audio', payload: pcm }]);
  });

  it('sends DTMF the codec reads', async () => {
    const { stream } = await streamFor();
    expect(readAll(stream, [stream.dtmf('7')]).events).toEqual([{ type: 'dtmf', digit: '7' }]);
  });

  it("plays the codec's audio frames, and warns of any that are not one 20 ms frame", async () => {
    const { stream } = await streamFor();
    const codec = createVonageCodec();
    const frame = Buffer.alloc(640, 5);
    const played = stream.serverFrame(codec.audio(frame) as Buffer, true);
    expect(played).toEqual([{ type: 'audio', payload: frame }]);
    const wrong = stream.serverFrame(Buffer.alloc(1280), true);
    expect(wrong[0]).toEqual({ type: 'warning', message: expect.stringMatching(/exactly one 20 ms frame/) });
  });

  it("echoes the codec's notify with its payload once played: the codec reads the mark", async () => {
    const { stream } = await streamFor();
    const codec = createVonageCodec();
    const [mark] = stream.serverFrame(Buffer.from(codec.mark('goodbye') as string), false);
    expect(mark).toEqual({ type: 'mark', name: expect.any(String) });
    const echo = stream.markPlayed((mark as { name: string }).name);
    expect(codec.parse(Buffer.from(echo as string), false)).toEqual({ type: 'mark', name: 'goodbye' });
  });

  it("clears on the codec's clear and confirms it as Vonage does", async () => {
    const { stream } = await streamFor();
    const codec = createVonageCodec();
    expect(stream.serverFrame(Buffer.from(codec.clear() as string), false)).toEqual([{ type: 'clear' }]);
    expect(codec.parse(Buffer.from(stream.cleared() as string), false)).toEqual({ type: 'cleared' });
  });

  it('sends no stop frame: the close ends the stream', async () => {
    const { stream } = await streamFor();
    expect(stream.stop()).toBeNull();
  });

  it("warns when the server runs past Vonage's 3,072-message buffer", async () => {
    const { stream } = await streamFor();
    const frame = Buffer.alloc(640);
    const warnings: string[] = [];
    for (let i = 0; i < 3200; i++) {
      for (const event of stream.serverFrame(frame, true))
        if (event.type === 'warning') warnings.push(event.message);
    }
    expect(warnings).toEqual([expect.stringMatching(/3072 messages ahead/)]);
  });

  it('warns once of an unknown action or a frame that is not JSON', async () => {
    const { stream } = await streamFor();
    expect(stream.serverFrame(Buffer.from('{"action":"dance"}'), false)).toEqual([
      { type: 'warning', message: expect.stringMatching(/unknown action/) },
    ]);
    expect(stream.serverFrame(Buffer.from('{"action":"dance"}'), false)).toEqual([]);
    expect(stream.serverFrame(Buffer.from('nope'), false)[0]).toMatchObject({ type: 'warning' });
  });

  it('posts a signed completed event after the hang-up, which the routes take', async () => {
    const { stream, intake } = await streamFor({ VONAGE_SIGNATURE_SECRET: SECRET }, [SECRET]);
    await stream.afterHangup!();
    expect(intake.refusals).toEqual([]);
    expect(server!.answered.at(-1)).toBe('POST /carriers/vonage/events 204');
  });

  it('posts that event to the event URL, where a wrong secret is refused', async () => {
    const { intake, baseUrl } = await start([SECRET]);
    const call = spec(baseUrl, { VONAGE_SIGNATURE_SECRET: SECRET });
    const answer = await vonageDialect.announce(call);
    if (answer.kind !== 'stream') throw new Error('expected a stream');
    // The event is signed with the environment as it is at hang-up.
    call.env = { VONAGE_SIGNATURE_SECRET: 'another-secret-another-secret-00' };
    await answer.stream.afterHangup!();
    expect(intake.refusals).toEqual([{ carrier: 'vonage', reason: 'signature_bad_signature' }]);
  });
});
