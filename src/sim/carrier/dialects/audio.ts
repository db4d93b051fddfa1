// The phone hears and speaks μ-law 8 kHz; a carrier's wire may carry A-law or 16-bit PCM at another
// rate. These convert one frame at a time (good enough for a simulated phone; the product itself
// never transcodes where the agent takes the carrier's format).
import { transcode } from '../../../audio/codec.js';
import type { MediaFormat } from '../../../audio/format.js';

const PHONE = { encoding: 'mulaw', sampleRate: 8000 } as const;

export function fromPhone(mulaw: Buffer, wire: MediaFormat): Buffer {
  return transcode(mulaw, PHONE, wire);
}

export function toPhone(bytes: Buffer, wire: MediaFormat): Buffer {
  return transcode(bytes, wire, PHONE);
}

/** Milliseconds of audio in `bytes` of `format`. */
export function durationMs(bytes: number, format: MediaFormat): number {
  const perSample = format.encoding === 'linear16' ? 2 : 1;
  return (bytes / perSample / format.sampleRate) * 1000;
}
