import { describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw } from '../../src/audio/codec.js';
import { readWav, toMulaw8k, WavFormatError } from '../../src/audio/wav.js';
import { writeWavMulaw, writeWavPcm16 } from '../../src/audio/wav-writer.js';

interface WavSpec {
  formatTag: number;
  channels?: number;
  sampleRate?: number;
  bitsPerSample: number;
  data: Buffer;
  /** Writes a WAVE_FORMAT_EXTENSIBLE fmt chunk whose sub-format carries `formatTag`. */
  extensible?: boolean;
  /** Chunks placed before fmt, as some tools do (LIST, bext…). */
  before?: Buffer[];
}

function chunk(id: string, body: Buffer, pad = true): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body, pad && body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

function buildWav(spec: WavSpec): Buffer {
  const channels = spec.channels ?? 1;
  const sampleRate = spec.sampleRate ?? 8000;
  const blockAlign = (channels * spec.bitsPerSample) / 8;
  const fmt = Buffer.alloc(spec.extensible ? 40 : 16);
  fmt.writeUInt16LE(spec.extensible ? 0xfffe : spec.formatTag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(sampleRate, 4);
  fmt.writeUInt32LE(sampleRate * blockAlign, 8);
  fmt.writeUInt16LE(blockAlign, 12);
  fmt.writeUInt16LE(spec.bitsPerSample, 14);
  if (spec.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(spec.bitsPerSample, 18);
    fmt.writeUInt32LE(channels === 2 ? 3 : 4, 20);
    fmt.writeUInt16LE(spec.formatTag, 24);
    Buffer.from('000000001000800000aa00389b71', 'hex').copy(fmt, 26);
  }
  const body = Buffer.concat([
    Buffer.from('WAVE', 'latin1'),
    ...(spec.before ?? []),
    chunk('fmt ', fmt),
    chunk('data', spec.data),
  ]);
  const header = Buffer.alloc(8);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
}

function int16Data(samples: number[]): Buffer {
  const data = Buffer.alloc(samples.length * 2);
  for (const [i, s] of samples.entries()) data.writeInt16LE(s, i * 2);
  return data;
}

function sine(frequency: number, sampleRate: number, seconds: number): Int16Array {
  const samples = new Int16Array(Math.round(sampleRate * seconds));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(12000 * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  }
  return samples;
}

function zeroCrossings(samples: Int16Array): number {
  let count = 0;
  for (let i = 1; i < samples.length; i++) {
    if (samples[i - 1]! < 0 !== samples[i]! < 0) count++;
  }
  return count;
}

describe('readWav', () => {
  it('reads 16-bit PCM exactly', () => {
    const wav = readWav(
      buildWav({ formatTag: 1, bitsPerSample: 16, data: int16Data([0, 1, -1, 32767, -32768]) }),
    );
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 1, format: 'pcm16' });
    expect(Array.from(wav.samples)).toEqual([0, 1, -1, 32767, -32768]);
  });

  it('reads unsigned 8-bit PCM', () => {
    const wav = readWav(buildWav({ formatTag: 1, bitsPerSample: 8, data: Buffer.from([128, 255, 0]) }));
    expect(wav.format).toBe('pcm8');
    expect(Array.from(wav.samples)).toEqual([0, 32512, -32768]);
  });

  it('reads 24-bit PCM keeping the top 16 bits', () => {
    const data = Buffer.alloc(6);
    data.writeIntLE(0x123456, 0, 3);
    data.writeIntLE(-0x400000, 3, 3);
    const wav = readWav(buildWav({ formatTag: 1, bitsPerSample: 24, data }));
    expect(wav.format).toBe('pcm24');
    expect(Array.from(wav.samples)).toEqual([0x1234, -0x4000]);
  });

  it('reads 32-bit PCM', () => {
    const data = Buffer.alloc(8);
    data.writeInt32LE(0x12340000, 0);
    data.writeInt32LE(-0x80000000, 4);
    const wav = readWav(buildWav({ formatTag: 1, bitsPerSample: 32, data }));
    expect(Array.from(wav.samples)).toEqual([0x1234, -32768]);
  });

  it('reads 32-bit float, clipping values beyond full scale', () => {
    const data = Buffer.alloc(16);
    for (const [i, v] of [0, 0.5, -1, 1.5].entries()) data.writeFloatLE(v, i * 4);
    const wav = readWav(buildWav({ formatTag: 3, bitsPerSample: 32, data }));
    expect(wav.format).toBe('float32');
    expect(Array.from(wav.samples)).toEqual([0, 16384, -32767, 32767]);
  });

  it('reads G.711 μ-law (7) and A-law (6) as the codec decodes them', () => {
    const bytes = Buffer.from([0x00, 0x7f, 0x80, 0xd5, 0xff]);
    const mulaw = readWav(buildWav({ formatTag: 7, bitsPerSample: 8, data: bytes }));
    expect(mulaw.format).toBe('mulaw');
    expect(Array.from(mulaw.samples)).toEqual(Array.from(decodeMulaw(bytes)));
    const alaw = readWav(buildWav({ formatTag: 6, bitsPerSample: 8, data: bytes }));
    expect(alaw.format).toBe('alaw');
    expect(Array.from(alaw.samples)).toEqual(Array.from(decodeAlaw(bytes)));
  });

  it('reads WAVE_FORMAT_EXTENSIBLE and mixes stereo down to mono', () => {
    const data = int16Data([1000, 3000, -500, 500, 32767, 32767]);
    const wav = readWav(
      buildWav({ formatTag: 1, channels: 2, sampleRate: 48000, bitsPerSample: 16, data, extensible: true }),
    );
    expect(wav).toMatchObject({ sampleRate: 48000, channels: 2, format: 'pcm16' });
    expect(Array.from(wav.samples)).toEqual([2000, 0, 32767]);
  });

  it('reads an extensible float file', () => {
    const data = Buffer.alloc(4);
    data.writeFloatLE(-0.5, 0);
    const wav = readWav(buildWav({ formatTag: 3, bitsPerSample: 32, data, extensible: true }));
    expect(wav.format).toBe('float32');
    expect(Array.from(wav.samples)).toEqual([-16383]);
  });

  it('skips unknown chunks, including odd-sized ones with their pad byte', () => {
    const before = [chunk('LIST', Buffer.from('abc')), chunk('junk', Buffer.alloc(4))];
    const wav = readWav(
      buildWav({ formatTag: 1, bitsPerSample: 16, sampleRate: 11025, data: int16Data([7, -7]), before }),
    );
    expect(wav.sampleRate).toBe(11025);
    expect(Array.from(wav.samples)).toEqual([7, -7]);
  });

  it('reads an odd-sized 8-bit data chunk without its trailing pad byte', () => {
    const file = buildWav({ formatTag: 7, bitsPerSample: 8, data: Buffer.from([0xff, 0xff, 0x80]) });
    expect(readWav(file.subarray(0, file.length - 1)).samples).toHaveLength(3);
  });

  it('takes the rest of the file when a streaming writer left the data size unknown', () => {
    const file = buildWav({ formatTag: 1, bitsPerSample: 16, data: int16Data([1, 2, 3]) });
    file.writeUInt32LE(0xffffffff, file.length - 10);
    expect(Array.from(readWav(file).samples)).toEqual([1, 2, 3]);
  });

  it('rejects what it cannot read with a clear error', () => {
    const expectError = (buf: Buffer, message: RegExp): void => {
      expect(() => readWav(buf)).toThrow(WavFormatError);
      expect(() => readWav(buf)).toThrow(message);
    };
    expectError(Buffer.from('OggS not a wav file at all'), /not a WAV file/);
    expectError(Buffer.alloc(0), /not a WAV file/);
    const full = buildWav({ formatTag: 1, bitsPerSample: 16, data: int16Data([1, 2, 3, 4]) });
    expectError(full.subarray(0, full.length - 3), /truncated WAV: data chunk declares 8 bytes, 5 present/);
    expectError(
      buildWav({ formatTag: 2, bitsPerSample: 4, data: Buffer.alloc(4) }),
      /unsupported WAV format: tag 0x0002/,
    );
    expectError(
      buildWav({ formatTag: 1, bitsPerSample: 64, data: Buffer.alloc(8) }),
      /unsupported WAV format/,
    );
    const noData = full.subarray(0, 36);
    expectError(noData, /no data chunk/);
    const strangeGuid = buildWav({
      formatTag: 1,
      bitsPerSample: 16,
      data: Buffer.alloc(2),
      extensible: true,
    });
    strangeGuid.writeUInt8(0x42, 20 + 8 + 30);
    expectError(strangeGuid, /non-standard sub-format/);
  });
});

describe('toMulaw8k', () => {
  it.each([16000, 44100, 48000])('resamples %i Hz to 8 kHz keeping duration and pitch', (rate) => {
    const source = sine(440, rate, 1);
    const mulaw = toMulaw8k({ sampleRate: rate, channels: 1, format: 'pcm16', samples: source });
    expect(mulaw.length).toBe(8000);
    // A 440 Hz tone crosses zero 880 times a second at any rate.
    expect(Math.abs(zeroCrossings(decodeMulaw(mulaw)) - 880)).toBeLessThanOrEqual(4);
  });

  it('passes 8 kHz μ-law through unchanged', () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((b) => b !== 0x7f));
    // 0x7f is μ-law's negative zero; encoding a zero sample gives the canonical 0xff.
    expect(toMulaw8k(readWav(writeWavMulaw(bytes)))).toEqual(bytes);
  });
});

describe('writing WAV files', () => {
  it('writes μ-law 8 kHz mono (format 7) that reads back byte-exact', () => {
    const bytes = Buffer.from([0x01, 0x80, 0xff]);
    const file = writeWavMulaw(bytes);
    expect(file.readUInt32LE(4)).toBe(file.length - 8);
    expect(file.length % 2).toBe(0);
    const wav = readWav(file);
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 1, format: 'mulaw' });
    expect(toMulaw8k(wav)).toEqual(bytes);
  });

  it('writes 16-bit PCM that reads back exactly at its rate', () => {
    const samples = sine(300, 22050, 0.05);
    const wav = readWav(writeWavPcm16(samples, 22050));
    expect(wav).toMatchObject({ sampleRate: 22050, channels: 1, format: 'pcm16' });
    expect(wav.samples).toEqual(samples);
  });

  it('writes an empty recording as a valid file', () => {
    expect(readWav(writeWavMulaw(Buffer.alloc(0))).samples).toHaveLength(0);
  });
});
