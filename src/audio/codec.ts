// Sample formats the phone legs and the voice agent use (docs/protocols/agent.md section 4.1 and the carrier pages): G.711 μ-law
// and A-law bytes, and 16-bit PCM ("linear16"). Everything converts through Int16Array samples.
import alawmulaw from 'alawmulaw';
import type { AudioEncoding } from './format.js';

// alawmulaw ships CommonJS only: Node hands it to ESM as a default export.
const { alaw, mulaw } = alawmulaw;

export type { AudioEncoding };

/** The sample rates callbridge meets on phone legs and agent sockets. */
export const SUPPORTED_SAMPLE_RATES: readonly number[] = Object.freeze([8000, 16000, 24000, 48000]);

/** μ-law byte of a zero sample: what a silent Twilio frame is made of. */
export const MULAW_SILENCE_BYTE = 0xff;
/** A-law byte of a zero sample (0x00 after the G.711 even-bit inversion). */
export const ALAW_SILENCE_BYTE = 0xd5;

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return mulaw.decode(bytes);
}

export function encodeMulaw(samples: Int16Array): Buffer {
  return toBuffer(mulaw.encode(samples));
}

export function decodeAlaw(bytes: Uint8Array): Int16Array {
  return alaw.decode(bytes);
}

export function encodeAlaw(samples: Int16Array): Buffer {
  return toBuffer(alaw.encode(samples));
}

/**
 * Little-endian 16-bit PCM to samples. Reads byte by byte: a Buffer from a socket may start at an
 * odd offset of its pool, where an Int16Array view cannot be made. A trailing odd byte is ignored.
 */
export function decodeLinear16(bytes: Uint8Array): Int16Array {
  const count = bytes.length >> 1;
  const samples = new Int16Array(count);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

export function encodeLinear16(samples: Int16Array): Buffer {
  const out = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, i * 2);
  return out;
}

/** Bytes one sample takes in an encoding. */
export function bytesPerSample(encoding: AudioEncoding): number {
  return encoding === 'linear16' ? 2 : 1;
}

export function decodeAudio(bytes: Uint8Array, encoding: AudioEncoding): Int16Array {
  switch (encoding) {
    case 'mulaw':
      return decodeMulaw(bytes);
    case 'alaw':
      return decodeAlaw(bytes);
    case 'linear16':
      return decodeLinear16(bytes);
  }
}

export function encodeAudio(samples: Int16Array, encoding: AudioEncoding): Buffer {
  switch (encoding) {
    case 'mulaw':
      return encodeMulaw(samples);
    case 'alaw':
      return encodeAlaw(samples);
    case 'linear16':
      return encodeLinear16(samples);
  }
}

/**
 * Linear-interpolation resampler. Good enough for speech between the telephone rates; it has no
 * anti-alias filter, so downsampling folds content above the new Nyquist back in. Each call is
 * independent: convert whole utterances, not tiny chunks, to avoid seams at chunk edges.
 */
export function resample(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  assertRate(fromRate);
  assertRate(toRate);
  if (fromRate === toRate || samples.length === 0) return samples;
  const outLength = Math.max(1, Math.round((samples.length * toRate) / fromRate));
  const out = new Int16Array(outLength);
  const step = fromRate / toRate;
  const last = samples.length - 1;
  for (let i = 0; i < outLength; i++) {
    const pos = i * step;
    const left = Math.min(Math.floor(pos), last);
    const right = Math.min(left + 1, last);
    const frac = pos - left;
    out[i] = Math.round(samples[left]! + (samples[right]! - samples[left]!) * frac);
  }
  return out;
}

export interface AudioFormat {
  encoding: AudioEncoding;
  sampleRate: number;
}

/** Converts a whole buffer between two formats (decode, resample, encode). */
export function transcode(bytes: Uint8Array, from: AudioFormat, to: AudioFormat): Buffer {
  if (from.encoding === to.encoding && from.sampleRate === to.sampleRate) return Buffer.from(bytes);
  const samples = resample(decodeAudio(bytes, from.encoding), from.sampleRate, to.sampleRate);
  return encodeAudio(samples, to.encoding);
}

function assertRate(rate: number): void {
  if (!SUPPORTED_SAMPLE_RATES.includes(rate)) {
    throw new RangeError(`unsupported sample rate ${rate} (use ${SUPPORTED_SAMPLE_RATES.join(', ')})`);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
