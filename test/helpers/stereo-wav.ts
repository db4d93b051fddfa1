// The two channels of a 16-bit PCM WAV kept apart (readWav mixes them down): for checking which
// side of a call is on which channel.
export interface StereoWav {
  sampleRate: number;
  channels: number;
  left: Int16Array;
  right: Int16Array;
}

export function readStereoWav(wav: Buffer): StereoWav {
  if (wav.toString('ascii', 0, 4) !== 'RIFF' || wav.toString('ascii', 8, 12) !== 'WAVE')
    throw new Error('not a WAV file');
  let channels = 0;
  let sampleRate = 0;
  let bits = 0;
  for (let at = 12; at + 8 <= wav.length;) {
    const id = wav.toString('ascii', at, at + 4);
    const size = wav.readUInt32LE(at + 4);
    if (id === 'fmt ') {
      channels = wav.readUInt16LE(at + 10);
      sampleRate = wav.readUInt32LE(at + 12);
      bits = wav.readUInt16LE(at + 22);
    }
    if (id === 'data') {
      if (bits !== 16 || channels !== 2)
        throw new Error(`expected 16-bit stereo, got ${bits}-bit x${channels}`);
      const frames = Math.floor(size / 4);
      const left = new Int16Array(frames);
      const right = new Int16Array(frames);
      for (let i = 0; i < frames; i++) {
        left[i] = wav.readInt16LE(at + 8 + i * 4);
        right[i] = wav.readInt16LE(at + 10 + i * 4);
      }
      return { sampleRate, channels, left, right };
    }
    at += 8 + size + (size % 2);
  }
  throw new Error('no data chunk');
}

/** Root-mean-square level of each 20 ms frame. */
export function frameEnergies(samples: Int16Array, sampleRate = 8000): number[] {
  const size = sampleRate / 50;
  const energies: number[] = [];
  for (let at = 0; at + size <= samples.length; at += size) {
    let sum = 0;
    for (let i = at; i < at + size; i++) sum += samples[i]! * samples[i]!;
    energies.push(Math.sqrt(sum / size));
  }
  return energies;
}
