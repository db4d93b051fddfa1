import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { realClock } from '../../../src/call/clock.js';
import { Downlink } from '../../../src/call/downlink/downlink.js';
import { createTelnyxAdapter } from '../../../src/carriers/telnyx/adapter.js';
import { loadConfig } from '../../../src/carriers/load-config.js';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { MINIMAL_PROJECT } from '../../config/project.js';
import { fakeLeg } from '../../helpers/call-fakes.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../../helpers/fake-carrier-api.js';
import { telnyxAccount } from '../../helpers/telnyx-carrier.js';

const logger = pino({ level: 'silent' });
let api: FakeCarrierApi | undefined;

afterEach(async () => {
  await api?.close();
  api = undefined;
});

function config(env: Record<string, string>) {
  return loadConfig(env, { cwd: MINIMAL_PROJECT });
}

describe('telnyx adapter', () => {
  it('is verified with a public key, and controls calls with an API key', () => {
    const metrics = createMetrics('global');
    const bare = createTelnyxAdapter(config({}), { logger, metrics });
    expect(bare).toMatchObject({ name: 'telnyx', verified: false, control: null, rest: null });
    const full = createTelnyxAdapter(
      config({ TELNYX_API_KEY: 'k', TELNYX_PUBLIC_KEY: telnyxAccount().publicKey }),
      { logger, metrics },
    );
    expect(full.verified).toBe(true);
    expect(full.control).not.toBeNull();
  });

  it('sends 20 ms multiples of the stream format downstream, never less than one frame a message', () => {
    const adapter = createTelnyxAdapter(config({}), { logger, metrics: createMetrics('global') });
    expect(adapter.downlink({ encoding: 'mulaw', sampleRate: 8000, channels: 1 })).toEqual({
      frameBytes: 160,
      minMessageBytes: 160,
    });
    expect(adapter.downlink({ encoding: 'linear16', sampleRate: 16000, channels: 1 })).toEqual({
      frameBytes: 640,
      minMessageBytes: 640,
    });
  });

  it("pads a reply's last partial frame with silence to a whole 20 ms message", () => {
    const adapter = createTelnyxAdapter(config({}), { logger, metrics: createMetrics('global') });
    const format = { encoding: 'mulaw', sampleRate: 8000, channels: 1 } as const;
    const leg = fakeLeg();
    const downlink = new Downlink({
      leg,
      rules: adapter.downlink(format),
      format,
      clock: realClock,
      counts: { downFrames: 0, downBytes: 0 },
    });
    downlink.replyStarted();
    downlink.audio(Buffer.alloc(170, 0x11));
    downlink.replyDone();
    const sent = leg.commands.flatMap((c) => (c.kind === 'audio' ? [c.bytes] : []));
    expect(sent.map((b) => b.length)).toEqual([160, 160]);
    expect(sent[1]!.subarray(0, 10).equals(Buffer.alloc(10, 0x11))).toBe(true);
    expect(sent[1]!.subarray(10).equals(Buffer.alloc(150, 0xff))).toBe(true);
  });

  it('hangs up and transfers through the API, counting each request', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
    const metrics = createMetrics('global');
    const adapter = createTelnyxAdapter(config({ TELNYX_API_KEY: 'k', TELNYX_API_URL: api.url }), {
      logger,
      metrics,
    });
    await adapter.control!.hangup('v3:call');
    await adapter.control!.transfer('v3:call', '+15550100');
    api.respond(() => ({ status: 500 }));
    await expect(adapter.control!.hangup('v3:call')).rejects.toMatchObject({ retryable: true });
    const counts = (await metrics.carrierApiRequests.get()).values.map((v) => [
      v.labels.operation,
      v.labels.outcome,
      v.value,
    ]);
    expect(counts).toEqual([
      ['hang up call', 'ok', 1],
      ['transfer call', 'ok', 1],
      ['hang up call', 'failed', 1],
    ]);
  });

  it('uses the simulated carrier API when no API key is set', async () => {
    api = await startFakeCarrierApi(() => ({ status: 200, body: { data: { result: 'ok' } } }));
    const adapter = createTelnyxAdapter(config({}), {
      logger,
      metrics: createMetrics('global'),
      simulatedApiUrl: api.url,
    });
    await adapter.control!.hangup('v3:call');
    expect(api.requests[0]!.authorization).toBe('Bearer simulated');
  });

  it("counts the codec's reorder outcomes and stream errors", async () => {
    const metrics = createMetrics('global');
    const codec = createTelnyxAdapter(config({}), { logger, metrics }).createCodec();
    const media = (seq: number) =>
      Buffer.from(
        JSON.stringify({ event: 'media', sequence_number: String(seq), media: { payload: 'AQ==' } }),
      );
    codec.parse(media(1), false);
    codec.parse(media(3), false);
    codec.parse(media(2), false);
    codec.parse(Buffer.from('{"event":"error","payload":{"code":1,"title":"t"}}'), false);
    const reorder = (await metrics.carrierMediaReorder.get()).values;
    expect(reorder).toEqual([
      expect.objectContaining({ labels: { carrier: 'telnyx', outcome: 'reordered' }, value: 1 }),
    ]);
    expect((await metrics.carrierStreamErrors.get()).values[0]).toMatchObject({ value: 1 });
  });
});
