// Both sides of a simulated call on the call's clock, for `callbridge call --out`: the caller's
// frames as sent (left) and the agent's as the phone's speaker played them (right), each at the
// 20 ms frame it happened in, so a silence on the line is silence in the file, not skipped. Written
// as a two-channel 16-bit PCM WAV at 8 kHz: any player shows the caller on the left.
import { decodeMulaw } from '../../audio/codec.js';
import { FRAME_BYTES } from './playout.js';

const MULAW_SILENCE = 0xff;
const RATE = 8000;

class Track {
  private bytes = Buffer.alloc(0);
  private length = 0;

  /** Puts `frame` at frame `index`, padding what came before with silence. */
  put(index: number, frame: Buffer): void {
    const at = index * FRAME_BYTES;
    const end = at + frame.length;
    if (end > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(end, this.bytes.length * 2, 64 * 1024), MULAW_SILENCE);
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    frame.copy(this.bytes, at);
    this.length = Math.max(this.length, end);
  }

  mulaw(length: number): Buffer {
    const out = Buffer.alloc(length, MULAW_SILENCE);
    this.bytes.copy(out, 0, 0, Math.min(length, this.length));
    return out;
  }

  get size(): number {
    return this.length;
  }
}

export class CallTape {
  private readonly callerTrack = new Track();
  private readonly agentTrack = new Track();
  /** The next frame the caller's audio goes to: frames sent at once (unpaced) follow each other. */
  private callerAt = 0;

  caller(frameIndex: number, frame: Buffer): void {
    this.callerAt = Math.max(this.callerAt, frameIndex);
    this.callerTrack.put(this.callerAt, frame);
    this.callerAt += 1;
  }

  agent(frameIndex: number, frame: Buffer): void {
    this.agentTrack.put(frameIndex, frame);
  }

  /** Both sides as μ-law 8 kHz, the same length: from the stream's start to its last sound. */
  sides(): { caller: Buffer; agent: Buffer } {
    const length = Math.max(this.callerTrack.size, this.agentTrack.size);
    return { caller: this.callerTrack.mulaw(length), agent: this.agentTrack.mulaw(length) };
  }
}

/** A two-channel 16-bit PCM WAV at 8 kHz: `left` and `right` are μ-law of equal length. */
export function writeStereoWav(left: Buffer, right: Buffer): Buffer {
  const l = decodeMulaw(left);
  const r = decodeMulaw(right);
  const frames = Math.min(l.length, r.length);
  const data = Buffer.alloc(frames * 4);
  for (let i = 0; i < frames; i++) {
    data.writeInt16LE(l[i]!, i * 4);
    data.writeInt16LE(r[i]!, i * 4 + 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(2, 22); // channels: caller, agent
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 4, 28);
  header.writeUInt16LE(4, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
