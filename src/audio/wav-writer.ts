// RIFF/WAVE files written: whole files (what `callbridge call` writes back, a speak answer, a prompt)
// and the header of a file streamed while its length is unknown (a call's recording). One writer for
// every WAV the project makes; wav.ts reads them.

// Format tags from the Microsoft RIFF specification (mmreg.h).
export const WAVE_FORMAT = Object.freeze({
  PCM: 0x0001,
  IEEE_FLOAT: 0x0003,
  ALAW: 0x0006,
  MULAW: 0x0007,
  EXTENSIBLE: 0xfffe,
});

export const PHONE_RATE = 8000;
/** RIFF, fmt (16 bytes) and the data chunk's header: what precedes the samples of a PCM file. */
export const PCM_WAV_HEADER_BYTES = 44;
/** What streaming writers put in a size not known yet, so a file cut short still reads to its end. */
const UNKNOWN_SIZE = 0xffffffff;

type Encoding = 'mulaw' | 'alaw' | 'linear16';

/** The fmt chunk's body; formats other than PCM carry the two-byte extension size (0). */
function fmtBody(encoding: Encoding, channels: number, sampleRate: number): Buffer {
  const bytesPerSample = encoding === 'linear16' ? 2 : 1;
  const fmt = Buffer.alloc(encoding === 'linear16' ? 16 : 18);
  const tag = { mulaw: WAVE_FORMAT.MULAW, alaw: WAVE_FORMAT.ALAW, linear16: WAVE_FORMAT.PCM }[encoding];
  fmt.writeUInt16LE(tag, 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(sampleRate, 4);
  fmt.writeUInt32LE(sampleRate * bytesPerSample * channels, 8);
  fmt.writeUInt16LE(bytesPerSample * channels, 12);
  fmt.writeUInt16LE(bytesPerSample * 8, 14);
  return fmt;
}

function chunkHeader(id: string, size: number): Buffer {
  const header = Buffer.alloc(8);
  header.write(id, 0, 'latin1');
  header.writeUInt32LE(size, 4);
  return header;
}

function chunk(id: string, body: Buffer): Buffer {
  const pad = body.length % 2 === 1 ? [Buffer.alloc(1)] : [];
  return Buffer.concat([chunkHeader(id, body.length), body, ...pad]);
}

function riffHeader(size: number): Buffer {
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(size, 4);
  header.write('WAVE', 8, 'latin1');
  return header;
}

/**
 * The 44-byte header of 16-bit PCM in `channels` channels: for `dataBytes` of samples, or with the
 * sizes unknown (`null`) for a file still being written (sizes past 4 GiB are left at the maximum).
 */
export function pcmWavHeader(channels: number, sampleRate: number, dataBytes: number | null): Buffer {
  const size = (bytes: number) => (dataBytes === null ? UNKNOWN_SIZE : Math.min(UNKNOWN_SIZE, bytes));
  const fmt = fmtBody('linear16', channels, sampleRate);
  return Buffer.concat([
    riffHeader(size(PCM_WAV_HEADER_BYTES - 8 + (dataBytes ?? 0))),
    chunkHeader('fmt ', fmt.length),
    fmt,
    chunkHeader('data', size(dataBytes ?? 0)),
  ]);
}

/**
 * Raw G.711 or 16-bit PCM bytes at any rate, wrapped as a mono WAV file (what a speak endpoint
 * answers with `container=wav`): a header that names the encoding and the rate. Non-PCM formats
 * take an 18-byte fmt chunk and a fact chunk holding the sample count.
 */
export function writeWavEncoded(audio: Buffer, encoding: Encoding, sampleRate: number): Buffer {
  if (encoding === 'linear16') return Buffer.concat([pcmWavHeader(1, sampleRate, audio.length), audio]);
  const fact = Buffer.alloc(4);
  fact.writeUInt32LE(audio.length, 0);
  const chunks = [chunk('fmt ', fmtBody(encoding, 1, sampleRate)), chunk('fact', fact), chunk('data', audio)];
  return Buffer.concat([riffHeader(4 + chunks.reduce((n, c) => n + c.length, 0)), ...chunks]);
}

/** μ-law 8 kHz mono WAV (format tag 7), byte-exact with what the phone leg carried. */
export function writeWavMulaw(mulaw: Buffer): Buffer {
  return writeWavEncoded(mulaw, 'mulaw', PHONE_RATE);
}

export function writeWavPcm16(samples: Int16Array, sampleRate: number): Buffer {
  const data = Buffer.allocUnsafe(samples.length * 2);
  for (let i = 0; i < samples.length; i++) data.writeInt16LE(samples[i]!, i * 2);
  return writeWavEncoded(data, 'linear16', sampleRate);
}
