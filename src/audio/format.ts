// The audio formats a phone leg or an agent socket carries (docs/protocols/agent.md and each
// carrier's page under docs/protocols/): G.711 μ-law and A-law, and 16-bit little-endian PCM.

export type AudioEncoding = 'mulaw' | 'alaw' | 'linear16';

export interface MediaFormat {
  encoding: AudioEncoding;
  sampleRate: number;
  channels: number;
}

/** The sample rates a phone leg may stream; anything else is refused at `start`. */
export const PHONE_SAMPLE_RATES: readonly number[] = Object.freeze([8000, 16000, 24000]);

/** What phone carriers stream by default, and so what an agent dialed before the stream assumes. */
export const MULAW_8K: Readonly<MediaFormat> = Object.freeze({
  encoding: 'mulaw',
  sampleRate: 8000,
  channels: 1,
});

export function bytesPerSample(encoding: AudioEncoding): number {
  return encoding === 'linear16' ? 2 : 1;
}

export function bytesPerMs(format: MediaFormat): number {
  return (format.sampleRate * bytesPerSample(format.encoding) * format.channels) / 1000;
}

/** The byte a silent sample is made of (linear16 silence is two zero bytes). */
export function silenceByte(encoding: AudioEncoding): number {
  switch (encoding) {
    case 'mulaw':
      return 0xff;
    case 'alaw':
      return 0xd5;
    case 'linear16':
      return 0x00;
  }
}

export function sameFormat(a: MediaFormat, b: MediaFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate && a.channels === b.channels;
}

/** Why a format read off the wire cannot be carried, or null when it can. */
export function unsupportedFormatReason(format: MediaFormat): string | null {
  if (!PHONE_SAMPLE_RATES.includes(format.sampleRate)) {
    return `sample rate ${format.sampleRate} is not one of ${PHONE_SAMPLE_RATES.join(', ')}`;
  }
  if (format.channels !== 1) return `${format.channels} channels (only mono is carried)`;
  return null;
}
