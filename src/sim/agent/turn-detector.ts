// Finds the caller's turns in the inbound audio: speech starts after a few voiced 20 ms frames and
// the turn ends after `endOfTurnSilenceMs` without voice. Time is counted in audio received, not on
// the wall clock, the way a listening model hears it: phone audio flows continuously, silence
// included (docs/protocols/agent.md section 13, on KeepAlive).
import { type AudioFormat, bytesPerSample, decodeAudio } from '../../audio/codec.js';
import { FRAME_MS, SpeechDetector, type SpeechDetectorOptions, samplesPerFrame } from '../../audio/energy.js';

export type TurnEvent = { type: 'speech-started' } | { type: 'turn-ended'; speechMs: number };

export interface TurnDetectorOptions extends SpeechDetectorOptions {
  endOfTurnSilenceMs: number;
}

export class TurnDetector {
  readonly #format: AudioFormat;
  readonly #frameBytes: number;
  readonly #endOfTurnFrames: number;
  readonly #speech: SpeechDetector;
  /** Bytes of an incomplete frame, carried to the next push; always shorter than one frame. */
  #carry: Buffer = Buffer.alloc(0);
  #inTurn = false;
  #turnFrames = 0;

  constructor(format: AudioFormat, opts: TurnDetectorOptions) {
    this.#format = format;
    this.#frameBytes = samplesPerFrame(format.sampleRate) * bytesPerSample(format.encoding);
    this.#endOfTurnFrames = Math.max(1, Math.ceil(opts.endOfTurnSilenceMs / FRAME_MS));
    this.#speech = new SpeechDetector(opts);
  }

  /** True from speech onset until the turn ends. */
  get userSpeaking(): boolean {
    return this.#inTurn;
  }

  push(bytes: Buffer): TurnEvent[] {
    const events: TurnEvent[] = [];
    let data = this.#carry.length > 0 ? Buffer.concat([this.#carry, bytes]) : bytes;
    while (data.length >= this.#frameBytes) {
      const event = this.#frame(decodeAudio(data.subarray(0, this.#frameBytes), this.#format.encoding));
      if (event) events.push(event);
      data = data.subarray(this.#frameBytes);
    }
    this.#carry = Buffer.from(data);
    return events;
  }

  #frame(samples: Int16Array): TurnEvent | undefined {
    const edge = this.#speech.push(samples);
    if (!this.#inTurn) {
      if (edge !== 'start') return undefined;
      // One UserStartedSpeaking per turn: a pause shorter than the end-of-turn silence continues it.
      this.#inTurn = true;
      this.#turnFrames = this.#speech.onsetFrames;
      return { type: 'speech-started' };
    }
    this.#turnFrames++;
    const silentFrames = this.#speech.unvoicedRun;
    if (!this.#speech.speaking && silentFrames >= this.#endOfTurnFrames) {
      this.#inTurn = false;
      return { type: 'turn-ended', speechMs: (this.#turnFrames - silentFrames) * FRAME_MS };
    }
    return undefined;
  }
}
