// Listen-in's view of a call (docs/console.md, "Listen"): both sides as interleaved stereo 16-bit
// PCM at the stream's rate, left the caller, right what the caller heard. A listener on the
// session's audio seam (audio-listener.ts): the caller's frames set the pace, and what the downlink
// played fills the right channel in step with them, as the caller heard it.
import { decodeAudio } from '../../audio/codec.js';
import type { MediaFormat } from '../../audio/format.js';
import type { CallAudioListener } from '../audio-listener.js';

/** Audio played ahead of the caller's frames kept at most this long; the rest is dropped. */
const MAX_AHEAD_MS = 30_000;

export class StereoTap implements CallAudioListener {
  readonly #format: MediaFormat;
  readonly #emit: (pcm: Buffer) => void;
  readonly #maxAhead: number;
  /** What the caller will hear next, in order, not yet paired with a caller frame. */
  #heard: Int16Array[] = [];
  #heardSamples = 0;

  constructor(format: MediaFormat, emit: (pcm: Buffer) => void) {
    this.#format = format;
    this.#emit = emit;
    this.#maxAhead = (format.sampleRate * MAX_AHEAD_MS) / 1_000;
  }

  callerFrame(payload: Buffer): void {
    const left = decodeAudio(payload, this.#format.encoding);
    const right = this.#take(left.length);
    const out = Buffer.allocUnsafe(left.length * 4);
    for (let i = 0; i < left.length; i++) {
      out.writeInt16LE(left[i]!, i * 4);
      out.writeInt16LE(right[i] ?? 0, i * 4 + 2);
    }
    this.#emit(out);
  }

  played(payload: Buffer): void {
    if (this.#heardSamples >= this.#maxAhead) return;
    // Copied: the session's buffers go on to the carrier.
    const samples = decodeAudio(Buffer.from(payload), this.#format.encoding);
    this.#heard.push(samples);
    this.#heardSamples += samples.length;
  }

  truncated(): void {
    // A barge-in: the carrier dropped what it held, so the caller never hears it.
    this.#heard = [];
    this.#heardSamples = 0;
  }

  #take(count: number): Int16Array {
    const out = new Int16Array(count);
    let filled = 0;
    while (filled < count && this.#heard.length > 0) {
      const head = this.#heard[0]!;
      const n = Math.min(count - filled, head.length);
      out.set(head.subarray(0, n), filled);
      filled += n;
      if (n === head.length) this.#heard.shift();
      else this.#heard[0] = head.subarray(n);
    }
    this.#heardSamples -= filled;
    return out;
  }
}
