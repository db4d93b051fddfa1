// RIFF/WAVE files read: what `callbridge call` streams to the server, voicemail and prompt audio.
// Reading accepts what audio tools commonly produce (any rate, 1+ channels, PCM 8 to 32 bits, float,
// G.711, WAVE_FORMAT_EXTENSIBLE); everything comes out as mono 16-bit samples. wav-writer.ts writes.
import { decodeAlaw, decodeMulaw, encodeMulaw } from './codec.js';
import { PHONE_RATE, WAVE_FORMAT } from './wav-writer.js';

export type WavSampleFormat = 'pcm8' | 'pcm16' | 'pcm24' | 'pcm32' | 'float32' | 'float64' | 'mulaw' | 'alaw';

export interface WavAudio {
  sampleRate: number;
  /** Channels in the file; `samples` is always mono (channels averaged). */
  channels: number;
  /** How the file stored its samples. */
  format: WavSampleFormat;
  samples: Int16Array;
}

/** A file that is not a WAV callbridge can read; the message says what is wrong with it. */
export class WavFormatError extends Error {
  readonly code = 'CALLBRIDGE_WAV_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'WavFormatError';
  }
}

const {
  PCM: WAVE_FORMAT_PCM,
  IEEE_FLOAT: WAVE_FORMAT_IEEE_FLOAT,
  ALAW: WAVE_FORMAT_ALAW,
  MULAW: WAVE_FORMAT_MULAW,
  EXTENSIBLE: WAVE_FORMAT_EXTENSIBLE,
} = WAVE_FORMAT;
// The fixed tail of every KSDATAFORMAT_SUBTYPE GUID; its first two bytes carry the plain format tag.
const SUBTYPE_GUID_TAIL = Buffer.from('000000001000800000aa00389b71', 'hex');
// Writers that stream a file of unknown length leave the data size at its maximum.
const UNKNOWN_SIZE = 0xffffffff;

interface FmtChunk {
  formatTag: number;
  channels: number;
  sampleRate: number;
  blockAlign: number;
  bitsPerSample: number;
}

export function readWav(buf: Buffer): WavAudio {
  if (
    buf.length < 12 ||
    buf.toString('latin1', 0, 4) !== 'RIFF' ||
    buf.toString('latin1', 8, 12) !== 'WAVE'
  ) {
    throw new WavFormatError('not a WAV file (no RIFF/WAVE header)');
  }
  let fmt: FmtChunk | undefined;
  let data: Buffer | undefined;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('latin1', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'data') {
      if (size === UNKNOWN_SIZE) {
        data = buf.subarray(body);
        break;
      }
      if (body + size > buf.length) {
        throw new WavFormatError(
          `truncated WAV: data chunk declares ${size} bytes, ${buf.length - body} present`,
        );
      }
      data = buf.subarray(body, body + size);
    } else if (id === 'fmt ') {
      if (size < 16 || body + size > buf.length) throw new WavFormatError('truncated WAV: short fmt chunk');
      fmt = readFmt(buf.subarray(body, body + size));
    }
    // Chunks are word-aligned: an odd-sized chunk is followed by one pad byte.
    offset = body + size + (size % 2);
  }
  if (fmt === undefined) throw new WavFormatError('invalid WAV: no fmt chunk');
  if (data === undefined) throw new WavFormatError('invalid WAV: no data chunk');
  const { format, bytesPerSample } = sampleFormat(fmt);
  if (fmt.blockAlign < bytesPerSample * fmt.channels) {
    throw new WavFormatError(
      `invalid WAV: block align ${fmt.blockAlign} too small for ${fmt.channels} channels`,
    );
  }
  return {
    sampleRate: fmt.sampleRate,
    channels: fmt.channels,
    format,
    samples: decodeFrames(data, fmt, format, bytesPerSample),
  };
}

function readFmt(chunk: Buffer): FmtChunk {
  let formatTag = chunk.readUInt16LE(0);
  const channels = chunk.readUInt16LE(2);
  const sampleRate = chunk.readUInt32LE(4);
  const blockAlign = chunk.readUInt16LE(12);
  const bitsPerSample = chunk.readUInt16LE(14);
  if (formatTag === WAVE_FORMAT_EXTENSIBLE) {
    if (chunk.length < 40) throw new WavFormatError('truncated WAV: short WAVE_FORMAT_EXTENSIBLE fmt chunk');
    const subFormat = chunk.subarray(24, 40);
    if (!subFormat.subarray(2).equals(SUBTYPE_GUID_TAIL)) {
      throw new WavFormatError('unsupported WAV: WAVE_FORMAT_EXTENSIBLE with a non-standard sub-format');
    }
    formatTag = subFormat.readUInt16LE(0);
  }
  if (channels === 0) throw new WavFormatError('invalid WAV: zero channels');
  if (sampleRate === 0) throw new WavFormatError('invalid WAV: zero sample rate');
  return { formatTag, channels, sampleRate, blockAlign, bitsPerSample };
}

function sampleFormat(fmt: FmtChunk): { format: WavSampleFormat; bytesPerSample: number } {
  const { formatTag, bitsPerSample } = fmt;
  // The container width; with EXTENSIBLE, bitsPerSample may exceed the valid bits (e.g. 24 in 32).
  const bytesPerSample = Math.ceil(bitsPerSample / 8);
  if (formatTag === WAVE_FORMAT_PCM && bytesPerSample >= 1 && bytesPerSample <= 4) {
    const format = (['pcm8', 'pcm16', 'pcm24', 'pcm32'] as const)[bytesPerSample - 1]!;
    return { format, bytesPerSample };
  }
  if (formatTag === WAVE_FORMAT_IEEE_FLOAT && (bitsPerSample === 32 || bitsPerSample === 64)) {
    return { format: bitsPerSample === 32 ? 'float32' : 'float64', bytesPerSample };
  }
  if ((formatTag === WAVE_FORMAT_MULAW || formatTag === WAVE_FORMAT_ALAW) && bitsPerSample === 8) {
    return { format: formatTag === WAVE_FORMAT_MULAW ? 'mulaw' : 'alaw', bytesPerSample: 1 };
  }
  const tag = `0x${formatTag.toString(16).padStart(4, '0')}`;
  throw new WavFormatError(`unsupported WAV format: tag ${tag}, ${bitsPerSample} bits per sample`);
}

function decodeFrames(data: Buffer, fmt: FmtChunk, format: WavSampleFormat, width: number): Int16Array {
  const { channels, blockAlign } = fmt;
  // A trailing partial frame (a cut-off write) is ignored rather than read past.
  const frames = Math.floor(data.length / blockAlign);
  const readSample = sampleReader(data, format);
  const out = new Int16Array(frames);
  for (let frame = 0; frame < frames; frame++) {
    let sum = 0;
    for (let channel = 0; channel < channels; channel++) {
      sum += readSample(frame * blockAlign + channel * width);
    }
    out[frame] = Math.round(sum / channels);
  }
  return out;
}

/** A reader of one sample at a byte offset, scaled to the 16-bit range. */
function sampleReader(data: Buffer, format: WavSampleFormat): (at: number) => number {
  switch (format) {
    case 'pcm8':
      // 8-bit WAV is the one unsigned width.
      return (at) => (data[at]! - 128) << 8;
    case 'pcm16':
      return (at) => data.readInt16LE(at);
    case 'pcm24':
      return (at) => data.readIntLE(at, 3) / 256;
    case 'pcm32':
      return (at) => data.readInt32LE(at) / 65536;
    case 'float32':
      return (at) => floatToInt16(data.readFloatLE(at));
    case 'float64':
      return (at) => floatToInt16(data.readDoubleLE(at));
    case 'mulaw': {
      const table = decodeMulaw(Uint8Array.from({ length: 256 }, (_, i) => i));
      return (at) => table[data[at]!]!;
    }
    case 'alaw': {
      const table = decodeAlaw(Uint8Array.from({ length: 256 }, (_, i) => i));
      return (at) => table[data[at]!]!;
    }
  }
}

function floatToInt16(value: number): number {
  if (Number.isNaN(value)) return 0;
  return Math.max(-1, Math.min(1, value)) * 32767;
}

/** The file as the phone leg carries it: mono, 8 kHz, G.711 μ-law bytes. */
export function toMulaw8k(wav: WavAudio): Buffer {
  return encodeMulaw(resampleAny(wav.samples, wav.sampleRate, PHONE_RATE));
}

/**
 * Resampling between arbitrary rates (44.1 kHz, 22.05 kHz… appear in files; the codec's resampler
 * only takes the rates the phone and agent legs use). Downsampling averages each output sample's
 * window of input first, a box filter that keeps most content above the new Nyquist from folding
 * back into the speech band; then linear interpolation.
 */
export function resampleAny(samples: Int16Array, fromRate: number, toRate: number): Int16Array {
  if (fromRate === toRate || samples.length === 0) return samples;
  const step = fromRate / toRate;
  const source = step > 1 ? boxFilter(samples, Math.round(step)) : samples;
  const outLength = Math.max(1, Math.round(samples.length / step));
  const out = new Int16Array(outLength);
  const last = source.length - 1;
  for (let i = 0; i < outLength; i++) {
    const pos = i * step;
    const left = Math.min(Math.floor(pos), last);
    const right = Math.min(left + 1, last);
    const frac = pos - left;
    out[i] = Math.round(source[left]! + (source[right]! - source[left]!) * frac);
  }
  return out;
}

function boxFilter(samples: Int16Array, width: number): Int16Array {
  if (width <= 1) return samples;
  const out = new Int16Array(samples.length);
  const half = Math.floor(width / 2);
  let sum = 0;
  let count = 0;
  // Running window [i - half, i - half + width) clipped to the signal.
  for (let i = 0; i < Math.min(width - half, samples.length); i++) {
    sum += samples[i]!;
    count++;
  }
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.round(sum / count);
    const enter = i - half + width;
    const leave = i - half;
    if (enter < samples.length) {
      sum += samples[enter]!;
      count++;
    }
    if (leave >= 0) {
      sum -= samples[leave]!;
      count--;
    }
  }
  return out;
}
