// The recorder of one call (docs/recordings.md): two channels on one clock from the stream's start,
// left the caller's frames, right what the caller heard (agent audio from when it plays, prompts
// and voicemails included, the rest of a reply cut by a barge-in left out). Nothing sent or heard
// is the stream's silence (zero; for A-law, which has no zero, its idle code: ±8 of 32,768), and a
// pause writes zeros on both. It listens to the call and never blocks it: audio is placed in a
// stereo buffer (stereo-buffer.ts), and a timer writes the stretch behind the present to the store,
// so memory follows how far ahead audio is queued, not how long the call is.
import type { AudioEncoding } from '../audio/format.js';
import { decodeAlaw, decodeMulaw } from '../audio/codec.js';
import type { Clock, ClockTimer } from '../call/clock.js';
import { LEFT, RIGHT, StereoBuffer } from './stereo-buffer.js';
import type { RecordingUpload } from './store.js';
import { BYTES_PER_FRAME, WAV_HEADER_BYTES, wavHeader } from './wav-header.js';

/** `deleted`: the recording was deleted while its call ran; nothing was written after. */
export type RecordingState = 'recording' | 'paused' | 'ready' | 'failed' | 'deleted';

export interface RecordingPause {
  /** Since the stream started. */
  atMs: number;
  durationMs: number;
}

/** What the call record keeps of its recording. */
export interface RecordingSummary {
  state: RecordingState;
  durationMs: number;
  /** The file's size, header included. */
  bytes: number;
  pauses: RecordingPause[];
}

export interface RecorderOptions {
  encoding: AudioEncoding;
  sampleRate: number;
  upload: RecordingUpload;
  clock: Clock;
  /** How often what lies behind the present is written (and so, at most, what a crash loses). */
  writeEveryMs?: number;
  /** How far behind the present writing stays, so caller frames arriving late still find their place. */
  holdMs?: number;
  /** Agent audio queued further ahead than this is not kept. */
  maxAheadMs?: number;
  /** Bytes waiting on the store past which the recording gives up rather than grow. */
  maxPendingBytes?: number;
  /** The recording gave up (the store failed or fell behind, or it was abandoned); the call goes on. */
  onFailed?(reason: string, stage: 'write' | 'abandoned'): void;
}

const DEFAULTS = {
  writeEveryMs: 2_000,
  holdMs: 500,
  maxAheadMs: 120_000,
  maxPendingBytes: 16 * 1024 * 1024,
} as const;

/** The 256 samples of each G.711 byte, decoded once. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
const TABLES = { mulaw: decodeMulaw(ALL_BYTES), alaw: decodeAlaw(ALL_BYTES) } as const;

/** A gap in the caller's frames longer than this is a gap (the carrier sent nothing), not jitter. */
const CALLER_GAP_MS = 200;
/** Agent audio starting this close after the queued audio ends continues it. */
const FOLLOWS_SAMPLES = 2;

export class CallRecorder {
  #state: RecordingState = 'recording';
  readonly #upload: RecordingUpload;
  readonly #clock: Clock;
  /** G.711's decoding table; null for 16-bit PCM. */
  readonly #table: Int16Array | null;
  readonly #rate: number;
  readonly #startMs: number;
  readonly #writeEveryMs: number;
  readonly #holdSamples: number;
  readonly #gapSamples: number;
  readonly #maxPendingBytes: number;
  readonly #onFailed: (reason: string, stage: 'write' | 'abandoned') => void;
  readonly #audio: StereoBuffer;
  /** Where the caller's next frame goes. */
  #leftNext = 0;
  /** Where the agent audio queued at the carrier ends. */
  #rightEnd = 0;
  /** Samples (per channel) written to the store. */
  #written = 0;
  /** Paused stretches not yet written past, in positions; `end` null while the pause lasts. */
  #silenced: Array<{ start: number; end: number | null }> = [];
  readonly #pauses: RecordingPause[] = [];
  #pausedAtMs: number | null = null;
  #timer: ClockTimer | null = null;
  #ended: Promise<RecordingSummary> | null = null;
  /** `finish` began: no more audio is taken. */
  #finishing = false;
  /** The store giving up a failed recording (removing what it can). */
  #aborted: Promise<void> | null = null;

  constructor(opts: RecorderOptions) {
    this.#upload = opts.upload;
    this.#clock = opts.clock;
    this.#table = opts.encoding === 'linear16' ? null : TABLES[opts.encoding];
    this.#rate = opts.sampleRate;
    this.#startMs = opts.clock.now();
    this.#writeEveryMs = opts.writeEveryMs ?? DEFAULTS.writeEveryMs;
    this.#holdSamples = this.#samplesIn(opts.holdMs ?? DEFAULTS.holdMs);
    this.#gapSamples = this.#samplesIn(CALLER_GAP_MS);
    this.#maxPendingBytes = opts.maxPendingBytes ?? DEFAULTS.maxPendingBytes;
    this.#onFailed = opts.onFailed ?? (() => {});
    const ahead = this.#samplesIn(opts.maxAheadMs ?? DEFAULTS.maxAheadMs);
    this.#audio = new StereoBuffer(opts.encoding, this.#table, ahead);
    this.#upload.write(wavHeader(this.#rate, null));
    this.#schedule();
  }

  get state(): RecordingState {
    return this.#state;
  }

  /** A frame from the caller, as the carrier sent it, arrived `atMs` after the call started. */
  callerFrame(payload: Buffer, atMs: number): void {
    if (!this.#accepting()) return;
    const count = this.#sampleCount(payload);
    // A frame ends about when it arrives; one arriving after a real gap starts after silence.
    const startsAt = this.#samplesIn(atMs) - count;
    let at = Math.max(this.#leftNext, this.#audio.base);
    if (startsAt > at + this.#gapSamples) at = startsAt;
    this.#audio.put(LEFT, at, payload);
    this.#leftNext = at + count;
  }

  /** Audio sent toward the caller, starting to play `atMs` after the call started. */
  played(payload: Buffer, atMs: number): void {
    if (!this.#accepting()) return;
    const count = this.#sampleCount(payload);
    const starts = this.#samplesIn(atMs);
    // Audio that follows what is queued follows it sample for sample (no rounding gap or overlap).
    const at =
      starts <= this.#rightEnd + FOLLOWS_SAMPLES ? Math.max(this.#rightEnd, this.#audio.base) : starts;
    this.#audio.put(RIGHT, at, payload);
    this.#rightEnd = at + count;
  }

  /** A barge-in: the carrier dropped what was to play after `atMs`; the caller never heard it. */
  truncated(atMs: number): void {
    if (!this.#accepting()) return;
    const at = Math.max(this.#samplesIn(atMs), this.#audio.base);
    this.#audio.cut(RIGHT, at);
    this.#rightEnd = Math.min(this.#rightEnd, at);
  }

  /** Silence on both channels from now until `resume`; false when not recording. */
  pause(): boolean {
    if (this.#state !== 'recording' || this.#finishing) return false;
    this.#state = 'paused';
    this.#pausedAtMs = this.#clock.now();
    this.#silenced.push({ start: this.#now(), end: null });
    return true;
  }

  /** Records again; false when not paused. */
  resume(): boolean {
    if (this.#state !== 'paused' || this.#finishing) return false;
    this.#state = 'recording';
    this.#closePause();
    return true;
  }

  /** Gives the recording up (its consent could not be played): nothing more is kept. */
  abandon(reason: string): void {
    if (this.#live() && !this.#finishing) this.#fail(reason, 'abandoned');
  }

  /**
   * The recording was deleted while its call runs: nothing more is written, what the store holds
   * is removed, and the call ends with its recording `deleted`. False when already over.
   */
  discard(): boolean {
    if (!this.#live() || this.#finishing) return false;
    this.#state = 'deleted';
    this.#stopTimer();
    this.#aborted = this.#upload.abort().catch(() => {});
    return true;
  }

  summary(): RecordingSummary {
    const dataBytes = this.#written * BYTES_PER_FRAME;
    return {
      state: this.#state,
      durationMs: Math.round((this.#written * 1000) / this.#rate),
      bytes: WAV_HEADER_BYTES + dataBytes,
      pauses: this.#pauses.map((pause) => ({ ...pause })),
    };
  }

  /**
   * The call ended: everything up to now (and every caller frame received) is written, the header
   * gets its final sizes and the store completes the file. Resolves with the summary; never rejects.
   */
  finish(): Promise<RecordingSummary> {
    this.#ended ??= this.#finish();
    return this.#ended;
  }

  async #finish(): Promise<RecordingSummary> {
    this.#finishing = true;
    this.#stopTimer();
    if (this.#state === 'failed' || this.#state === 'deleted') {
      await this.#aborted;
      return this.summary();
    }
    if (this.#state === 'paused') this.#closePause();
    const now = this.#now();
    // Audio still queued at the carrier when the call ended never played.
    this.#audio.cut(RIGHT, now);
    this.#write(Math.max(now, this.#leftNext));
    if (this.#live()) {
      try {
        await this.#upload.end();
        this.#state = 'ready';
      } catch (err) {
        this.#fail(`the store did not complete the recording: ${(err as Error).message}`);
      }
    }
    return this.summary();
  }

  #live(): boolean {
    return this.#state === 'recording' || this.#state === 'paused';
  }

  #accepting(): boolean {
    return this.#live() && !this.#finishing;
  }

  #closePause(): void {
    const started = this.#pausedAtMs ?? this.#clock.now();
    this.#pausedAtMs = null;
    const open = this.#silenced.at(-1);
    if (open && open.end === null) open.end = this.#now();
    this.#pauses.push({
      atMs: Math.round(started - this.#startMs),
      durationMs: Math.round(this.#clock.now() - started),
    });
  }

  /** Writes both channels, decoded and interleaved, from what is written up to position `upTo`. */
  #write(upTo: number): void {
    const count = upTo - this.#written;
    if (count <= 0 || !this.#live()) return;
    // Its own memory (not a slice of the shared pool), so the 16-bit view is aligned.
    const bytes = Buffer.allocUnsafeSlow(count * BYTES_PER_FRAME);
    const frames = new Int16Array(bytes.buffer, bytes.byteOffset, count * 2);
    this.#audio.take(upTo, frames);
    this.#leftNext = Math.max(this.#leftNext, upTo);
    this.#rightEnd = Math.max(this.#rightEnd, upTo);
    for (const stretch of this.#silenced) {
      const from = Math.max(stretch.start, this.#written) - this.#written;
      const to = Math.min(stretch.end ?? upTo, upTo) - this.#written;
      if (to > from) frames.fill(0, 2 * from, 2 * to);
    }
    this.#silenced = this.#silenced.filter((stretch) => stretch.end === null || stretch.end > upTo);
    this.#written = upTo;
    this.#upload.write(bytes);
    this.#upload.rewriteStart(wavHeader(this.#rate, this.#written * BYTES_PER_FRAME));
    if (this.#upload.pendingBytes > this.#maxPendingBytes) {
      this.#fail('the store fell behind the call');
    }
  }

  #fail(reason: string, stage: 'write' | 'abandoned' = 'write'): void {
    this.#state = 'failed';
    this.#stopTimer();
    this.#aborted = this.#upload.abort().catch(() => {});
    this.#onFailed(reason, stage);
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = null;
      this.#write(this.#now() - this.#holdSamples);
      if (this.#live()) this.#schedule();
    }, this.#writeEveryMs);
  }

  #stopTimer(): void {
    if (this.#timer !== null) this.#clock.clearTimeout(this.#timer);
    this.#timer = null;
  }

  #sampleCount(payload: Buffer): number {
    return this.#table === null ? payload.length >> 1 : payload.length;
  }

  /** The present as a position: samples since the stream started. */
  #now(): number {
    return this.#samplesIn(this.#clock.now() - this.#startMs);
  }

  #samplesIn(ms: number): number {
    return Math.floor((ms * this.#rate) / 1000);
  }
}
