// Reads back a recording: the RIFF chunks walked as a player would, the two channels of 16-bit
// samples split apart. A data size of 0xFFFFFFFF (a stream cut short) reads to the end of the file.
import { rmsEnergy } from '../../src/audio/energy.js';

export interface StereoWav {
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** The data chunk's declared size (0xFFFFFFFF: unknown). */
  declaredDataBytes: number;
  left: Int16Array;
  right: Int16Array;
}

export function readStereoWav(file: Buffer): StereoWav {
  if (file.toString('latin1', 0, 4) !== 'RIFF' || file.toString('latin1', 8, 12) !== 'WAVE') {
    throw new Error('not a RIFF/WAVE file');
  }
  let offset = 12;
  let fmt: { channels: number; sampleRate: number; bitsPerSample: number; tag: number } | null = null;
  while (offset + 8 <= file.length) {
    const id = file.toString('latin1', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      fmt = {
        tag: file.readUInt16LE(body),
        channels: file.readUInt16LE(body + 2),
        sampleRate: file.readUInt32LE(body + 4),
        bitsPerSample: file.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('data before fmt');
      const end = size === 0xffffffff ? file.length : body + size;
      if (end > file.length)
        throw new Error(`data chunk declares ${size} bytes, ${file.length - body} present`);
      const frames = Math.floor((end - body) / 4);
      const left = new Int16Array(frames);
      const right = new Int16Array(frames);
      for (let i = 0; i < frames; i++) {
        left[i] = file.readInt16LE(body + i * 4);
        right[i] = file.readInt16LE(body + i * 4 + 2);
      }
      if (fmt.tag !== 1) throw new Error(`format tag ${fmt.tag} is not PCM`);
      return { ...fmt, declaredDataBytes: size, left, right };
    }
    offset = body + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/** Root-mean-square level of each 20 ms frame of one channel. */
export function frameEnergies(samples: Int16Array, sampleRate = 8000): number[] {
  const size = sampleRate / 50;
  const energies: number[] = [];
  for (let at = 0; at + size <= samples.length; at += size)
    energies.push(rmsEnergy(samples.subarray(at, at + size)));
  return energies;
}
