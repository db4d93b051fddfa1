// Where a carrier streams a format the agent takes (linear16 at 8, 16 or 24 kHz), Settings declares
// that very format and the bytes cross the bridge untouched both ways: no transcoding, no resampling.
import { describe, expect, it } from 'vitest';
import { audioSpec, buildSettings } from '../../src/agent/settings.js';
import type { MediaFormat } from '../../src/audio/format.js';
import { createExotelCodec } from '../../src/carriers/exotel/codec.js';
import { EXOTEL_MEDIA_FORMAT } from '../../src/carriers/exotel/routes.js';
import { createVonageCodec } from '../../src/carriers/vonage/codec.js';
import { VONAGE_MEDIA_FORMAT } from '../../src/carriers/vonage/routes.js';
import { load } from '../config/project.js';

function pcm(bytes: number): Buffer {
  const out = Buffer.alloc(bytes);
  // Every byte value, so a byte-order swap or a resample would show.
  for (let i = 0; i < bytes; i++) out[i] = (i * 73 + 11) & 0xff;
  return out;
}

describe('audioSpec', () => {
  it('declares linear16 at the stream rate for 8, 16 and 24 kHz', () => {
    for (const sampleRate of [8000, 16000, 24000]) {
      expect(audioSpec({ encoding: 'linear16', sampleRate, channels: 1 })).toEqual({
        encoding: 'linear16',
        sample_rate: sampleRate,
      });
    }
  });
});

describe.each([
  ['vonage', VONAGE_MEDIA_FORMAT, { encoding: 'linear16', sample_rate: 16000 }],
  ['exotel', EXOTEL_MEDIA_FORMAT, { encoding: 'linear16', sample_rate: 8000 }],
] as const)('%s native format', (carrier, format: MediaFormat, spec) => {
  it('is what Settings declares for input and output', () => {
    const profile = load({}).profiles.default!;
    const settings = buildSettings(profile, { callSid: 'c', streamSid: 's', carrier }, format);
    expect(settings.audio).toEqual({ input: spec, output: { ...spec, container: 'none' } });
  });
});

describe('bytes pass untouched', () => {
  it('vonage: a caller frame reaches the agent as the same bytes, and agent audio leaves as the same bytes', () => {
    const codec = createVonageCodec();
    const caller = pcm(640);
    const event = codec.parse(caller, true);
    expect(event).toEqual({ type: 'audio', payload: caller });
    const agent = pcm(640).reverse();
    expect(Buffer.compare(codec.audio(agent) as Buffer, agent)).toBe(0);
  });

  it('exotel: media payloads decode to the exact bytes sent, and agent audio encodes to them', () => {
    const codec = createExotelCodec();
    codec.parse(
      Buffer.from(
        JSON.stringify({
          event: 'start',
          stream_sid: 's1',
          start: {
            call_sid: 'c1',
            media_format: { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' },
          },
        }),
      ),
      false,
    );
    const caller = pcm(1600);
    const frame = `{"event":"media","sequence_number":"2","stream_sid":"s1","media":{"chunk":"1","timestamp":"0","payload":"${caller.toString('base64')}"}}`;
    expect(codec.parse(Buffer.from(frame), false)).toEqual({ type: 'audio', payload: caller });
    const agent = pcm(3200).reverse();
    const sent = JSON.parse(codec.audio(agent) as string) as { media: { payload: string } };
    expect(Buffer.compare(Buffer.from(sent.media.payload, 'base64'), agent)).toBe(0);
  });
});
