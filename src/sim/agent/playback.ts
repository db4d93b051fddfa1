// Sends one reply's audio to the client in chunks, and stops the moment it is cancelled (barge-in).
//
// Pacing: the real agent streams synthesized speech faster than it plays, so the client must
// buffer and must clear the phone leg on barge-in. We copy that: 100 ms chunks at twice real time
// (one every 50 ms). Sending everything at once would hide clients that assume audio arrives in
// real time; pacing at exactly real time would hide clients that never queue. With `realtime` off
// (tests), chunks go out back to back, yielding to the event loop between chunks.
import { type AudioFormat, bytesPerSample } from '../../audio/codec.js';

export const REPLY_CHUNK_MS = 100;
export const REPLY_SPEEDUP = 2;

export type PlaybackEnd = 'completed' | 'cancelled';

export interface PlaybackOptions {
  format: AudioFormat;
  realtime: boolean;
  send(chunk: Buffer): void;
}

export class Playback {
  readonly #audio: Buffer;
  readonly #opts: PlaybackOptions;
  readonly #chunkBytes: number;
  #offset = 0;
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #finish: ((end: PlaybackEnd) => void) | undefined;

  constructor(audio: Buffer, opts: PlaybackOptions) {
    this.#audio = audio;
    this.#opts = opts;
    this.#chunkBytes =
      Math.round((opts.format.sampleRate * REPLY_CHUNK_MS) / 1000) * bytesPerSample(opts.format.encoding);
  }

  get bytesSent(): number {
    return this.#offset;
  }

  /** Resolves once every chunk is sent, or on cancel. Call once. */
  play(): Promise<PlaybackEnd> {
    return new Promise((resolve) => {
      this.#finish = resolve;
      this.#next();
    });
  }

  /** Stops at once: no further chunk is sent. Safe to call at any time, more than once. */
  cancel(): void {
    clearTimeout(this.#timer);
    clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
    this.#end('cancelled');
  }

  #next(): void {
    this.#timer = undefined;
    this.#immediate = undefined;
    if (!this.#finish) return;
    if (this.#offset >= this.#audio.length) {
      this.#end('completed');
      return;
    }
    const chunk = this.#audio.subarray(this.#offset, this.#offset + this.#chunkBytes);
    this.#offset += chunk.length;
    this.#opts.send(chunk);
    if (this.#opts.realtime) this.#timer = setTimeout(() => this.#next(), REPLY_CHUNK_MS / REPLY_SPEEDUP);
    else this.#immediate = setImmediate(() => this.#next());
  }

  #end(end: PlaybackEnd): void {
    const finish = this.#finish;
    this.#finish = undefined;
    finish?.(end);
  }
}
