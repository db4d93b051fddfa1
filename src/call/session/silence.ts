// Caller silence: after `silencePromptMs` the agent should check in, after `silenceHangupMs` the
// call should end politely (profile `limits`; 0 disables either). Silence is measured on a clock
// that runs only while neither side speaks: caller speech (the energy detector) resets it to zero,
// agent speech pauses it, so a long reply never counts against the caller and the check-in prompt
// itself does not restart the count towards hang-up.
//
// This runs on every 20 ms frame of every call, so the frame path allocates nothing: bytes are
// decoded through 256-entry G.711 tables into one reused frame buffer.
import { decodeAlaw, decodeMulaw } from '../../audio/codec.js';
import { FRAME_MS, SpeechDetector, type SpeechDetectorOptions, samplesPerFrame } from '../../audio/energy.js';
import type { AudioEncoding } from '../../audio/format.js';

/** Schedules `callback` after `delayMs`; returns the function that cancels it. */
export type SetTimer = (callback: () => void, delayMs: number) => () => void;

export interface SilenceMonitorOptions {
  silencePromptMs: number;
  silenceHangupMs: number;
  onPrompt(): void;
  onHangup(): void;
  /** When the caller stopped speaking (see `onSpeechEnd`). */
  onSpeechEnd?: (atMs: number) => void;
  /** Encoding of the bytes given to `callerAudio`. Default `mulaw`. */
  encoding?: AudioEncoding;
  /** Default 8000. */
  sampleRate?: number;
  detector?: SpeechDetectorOptions;
  nowMs?: () => number;
  setTimer?: SetTimer;
}

const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, i) => i);
// Built once from the codec itself, so the tables cannot drift from what the rest of callbridge decodes.
const MULAW_TABLE = decodeMulaw(ALL_BYTES);
const ALAW_TABLE = decodeAlaw(ALL_BYTES);
// Squared sample values: a whole G.711 frame's energy is one table lookup and one add per byte.
const MULAW_SQUARES = Float64Array.from(MULAW_TABLE, (s) => s * s);
const ALAW_SQUARES = Float64Array.from(ALAW_TABLE, (s) => s * s);

const defaultSetTimer: SetTimer = (callback, delayMs) => {
  const timer = setTimeout(callback, delayMs);
  timer.unref?.();
  return () => clearTimeout(timer);
};

export class SilenceMonitor {
  /**
   * Called when the detector declares the caller's speech over, with the time the last voiced
   * frame ended (detection time minus the unvoiced frames the detector waited through), for
   * measuring how long the caller waits for the agent's answer.
   */
  onSpeechEnd: ((atMs: number) => void) | undefined;

  readonly #opts: SilenceMonitorOptions;
  readonly #now: () => number;
  readonly #setTimer: SetTimer;
  readonly #detector: SpeechDetector;
  readonly #table: Int16Array | null;
  readonly #squares: Float64Array | null;
  readonly #frame: Int16Array;
  /** A whole frame's sum of squared samples at the detector's threshold (RMS² × samples). */
  readonly #voicedSum: number;
  #fill = 0;
  /** Low byte of a linear16 sample split across two payloads; -1 when none. */
  #oddByte = -1;

  #agentSpeaking = false;
  /** Silence from earlier runs of the clock, since the caller last spoke. */
  #silenceMs = 0;
  /** When the clock started running; null while paused. */
  #runningSinceMs: number | null = null;
  #cancelTimer: (() => void) | null = null;
  #prompted = false;
  #finished = false;

  constructor(opts: SilenceMonitorOptions) {
    this.#opts = opts;
    this.onSpeechEnd = opts.onSpeechEnd;
    this.#now = opts.nowMs ?? (() => performance.now());
    this.#setTimer = opts.setTimer ?? defaultSetTimer;
    this.#detector = new SpeechDetector(opts.detector);
    const encoding = opts.encoding ?? 'mulaw';
    this.#table = encoding === 'mulaw' ? MULAW_TABLE : encoding === 'alaw' ? ALAW_TABLE : null;
    this.#squares = encoding === 'mulaw' ? MULAW_SQUARES : encoding === 'alaw' ? ALAW_SQUARES : null;
    this.#frame = new Int16Array(samplesPerFrame(opts.sampleRate ?? 8000));
    this.#voicedSum = this.#detector.thresholdRms ** 2 * this.#frame.length;
    this.#sync();
  }

  /** Silence counted so far (paused time excluded). */
  get silenceMs(): number {
    return this.#elapsed();
  }

  get callerSpeaking(): boolean {
    return this.#detector.speaking;
  }

  /** Raw caller audio in the configured encoding, any chunk size. */
  callerAudio(payload: Uint8Array): void {
    if (this.#finished) return;
    const table = this.#table;
    const squares = this.#squares;
    if (table && squares) {
      let i = 0;
      // Frame-aligned whole frames (the usual 20 ms payload) skip the sample buffer.
      const n = this.#frame.length;
      if (this.#fill === 0) {
        const voicedSum = this.#voicedSum;
        for (; payload.length - i >= n; i += n) {
          // A frame is voiced once its energy reaches the threshold's: the rest need not be summed.
          let sum = 0;
          for (let k = i; k < i + n && sum < voicedSum; k++) sum += squares[payload[k]!]!;
          this.#frameDone(this.#detector.pushVoiced(sum >= voicedSum));
          if (this.#finished) return;
        }
      }
      for (; i < payload.length; i++) this.#pushSample(table[payload[i]!]!);
      return;
    }
    // linear16, little-endian (docs/protocols/agent.md section 4.1); a sample may straddle two payloads.
    // `<< 16 >> 16` sign-extends the 16-bit value.
    let i = 0;
    if (this.#oddByte >= 0 && payload.length > 0) {
      this.#pushSample((((payload[0]! << 8) | this.#oddByte) << 16) >> 16);
      this.#oddByte = -1;
      i = 1;
    }
    for (; i + 1 < payload.length; i += 2)
      this.#pushSample((((payload[i + 1]! << 8) | payload[i]!) << 16) >> 16);
    if (i < payload.length) this.#oddByte = payload[i]!;
  }

  /** Caller audio already decoded to 16-bit samples at the configured rate. */
  callerSamples(samples: Int16Array): void {
    if (this.#finished) return;
    for (let i = 0; i < samples.length; i++) this.#pushSample(samples[i]!);
  }

  /** The agent started or stopped being heard; while it speaks the silence clock is paused. */
  agentSpeaking(speaking: boolean): void {
    if (this.#agentSpeaking === speaking) return;
    this.#agentSpeaking = speaking;
    this.#sync();
  }

  dispose(): void {
    this.#finished = true;
    this.#sync();
  }

  #pushSample(sample: number): void {
    this.#frame[this.#fill++] = sample;
    if (this.#fill < this.#frame.length) return;
    this.#fill = 0;
    this.#frameDone(this.#detector.push(this.#frame));
  }

  #frameDone(edge: 'start' | 'end' | null): void {
    if (edge === 'start') this.#callerStarted();
    else if (edge === 'end') this.#callerStopped();
  }

  #callerStarted(): void {
    this.#sync();
    this.#silenceMs = 0;
    this.#prompted = false;
  }

  #callerStopped(): void {
    const now = this.#now();
    const atMs = now - this.#detector.unvoicedRun * FRAME_MS;
    // The silence began with the last voiced frame, not when the detector became sure of it.
    this.#silenceMs = now - atMs;
    this.#sync();
    this.onSpeechEnd?.(atMs);
  }

  #elapsed(): number {
    const since = this.#runningSinceMs;
    return this.#silenceMs + (since === null ? 0 : this.#now() - since);
  }

  /** Starts or pauses the clock to match who is speaking, and re-arms the timer. */
  #sync(): void {
    const shouldRun = !this.#finished && !this.#agentSpeaking && !this.#detector.speaking;
    if (shouldRun && this.#runningSinceMs === null) {
      this.#runningSinceMs = this.#now();
    } else if (!shouldRun && this.#runningSinceMs !== null) {
      this.#silenceMs += this.#now() - this.#runningSinceMs;
      this.#runningSinceMs = null;
    }
    this.#arm();
  }

  #arm(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = null;
    if (this.#runningSinceMs === null) return;
    const due = this.#nextThresholdMs();
    if (due === null) return;
    this.#cancelTimer = this.#setTimer(() => this.#check(), Math.max(0, due - this.#elapsed()));
  }

  /** The next limit still to come, or null. */
  #nextThresholdMs(): number | null {
    const { silencePromptMs, silenceHangupMs } = this.#opts;
    const prompt = silencePromptMs > 0 && !this.#prompted ? silencePromptMs : Number.POSITIVE_INFINITY;
    const hangup = silenceHangupMs > 0 ? silenceHangupMs : Number.POSITIVE_INFINITY;
    const next = Math.min(prompt, hangup);
    return Number.isFinite(next) ? next : null;
  }

  #check(): void {
    this.#cancelTimer = null;
    if (this.#runningSinceMs === null) return;
    const elapsed = this.#elapsed();
    const { silencePromptMs, silenceHangupMs, onPrompt, onHangup } = this.#opts;
    // State is settled before a callback runs: a callback may call back into the monitor.
    if (silenceHangupMs > 0 && elapsed >= silenceHangupMs) {
      // A prompt due at the same moment is pointless: the call is ending.
      this.#finished = true;
      this.#sync();
      onHangup();
      return;
    }
    const prompt = silencePromptMs > 0 && !this.#prompted && elapsed >= silencePromptMs;
    if (prompt) this.#prompted = true;
    this.#arm();
    if (prompt) onPrompt();
  }
}
