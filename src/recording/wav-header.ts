// The header of a recording: RIFF/WAVE, PCM, two channels of 16-bit samples (docs/recordings.md).
// It is written first with the sizes unknown (0xFFFFFFFF, what streaming writers use, so a file
// cut short still reads to its end) and rewritten with the sizes as data is written.

export const WAV_HEADER_BYTES = 44;
export const RECORDING_CHANNELS = 2;
export const BYTES_PER_FRAME = RECORDING_CHANNELS * 2;
const UNKNOWN = 0xffffffff;

/** The header for `dataBytes` of samples, or for a length not known yet (`null`). */
export function wavHeader(sampleRate: number, dataBytes: number | null): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  const riffSize = dataBytes === null ? UNKNOWN : Math.min(UNKNOWN, WAV_HEADER_BYTES - 8 + dataBytes);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(riffSize, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(RECORDING_CHANNELS, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * BYTES_PER_FRAME, 28);
  header.writeUInt16LE(BYTES_PER_FRAME, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes === null ? UNKNOWN : Math.min(UNKNOWN, dataBytes), 40);
  return header;
}

/** The sample rate a recording's header names (to serve it with its sizes filled in). */
export function headerSampleRate(header: Buffer): number | null {
  if (header.length < WAV_HEADER_BYTES || header.toString('latin1', 0, 4) !== 'RIFF') return null;
  return header.readUInt32LE(24);
}
