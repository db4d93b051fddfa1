// The header of a recording: RIFF/WAVE, PCM, two channels of 16-bit samples (docs/recordings.md),
// written by the project's one WAV writer (src/audio/wav-writer.ts). It is written first with the
// sizes unknown (0xFFFFFFFF, what streaming writers use, so a file cut short still reads to its end)
// and rewritten with the sizes as data is written.
import { PCM_WAV_HEADER_BYTES, pcmWavHeader } from '../audio/wav-writer.js';

export const WAV_HEADER_BYTES = PCM_WAV_HEADER_BYTES;
export const RECORDING_CHANNELS = 2;
export const BYTES_PER_FRAME = RECORDING_CHANNELS * 2;

/** The header for `dataBytes` of samples, or for a length not known yet (`null`). */
export function wavHeader(sampleRate: number, dataBytes: number | null): Buffer {
  return pcmWavHeader(RECORDING_CHANNELS, sampleRate, dataBytes);
}

/** The sample rate a recording's header names (to serve it with its sizes filled in). */
export function headerSampleRate(header: Buffer): number | null {
  if (header.length < WAV_HEADER_BYTES || header.toString('latin1', 0, 4) !== 'RIFF') return null;
  return header.readUInt32LE(24);
}
