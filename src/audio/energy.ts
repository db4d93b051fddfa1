// Energy-based speech detection on 20 ms frames of 16-bit PCM. Crude next to a trained VAD, but
// deterministic: it decides on audio time (frames received), never on the wall clock.

/** Frame length the detector is tuned for; phone legs carry 20 ms frames (docs/protocols/twilio.md section 3). */
export const FRAME_MS = 20;

/** Samples in one 20 ms frame at a sample rate. */
export function samplesPerFrame(sampleRate: number): number {
  return Math.round((sampleRate * FRAME_MS) / 1000);
}

/** Root-mean-square level of the samples, 0 to 32768. */
export function rmsEnergy(samples: Int16Array): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i]!;
    sum += s * s;
  }
  return Math.sqrt(sum / samples.length);
}

export interface SpeechDetectorOptions {
  /**
   * RMS above which a frame counts as voiced. 500 (about -36 dBFS) sits well above the hiss of a
   * phone line and μ-law idle noise, well below conversational speech (2000 to 8000).
   */
  thresholdRms?: number;
  /** Consecutive voiced frames before speech is declared: clicks and pops last one or two. */
  onsetFrames?: number;
  /** Unvoiced frames tolerated inside speech (the gaps between words) before speech ends. */
  hangoverFrames?: number;
}

export type SpeechEdge = 'start' | 'end' | null;

/**
 * Turns a stream of frames into speech start and end edges. `push` one 20 ms frame at a time;
 * it returns the edge that frame caused, if any.
 */
export class SpeechDetector {
  readonly thresholdRms: number;
  readonly onsetFrames: number;
  readonly hangoverFrames: number;
  #speaking = false;
  #voicedRun = 0;
  #unvoicedRun = 0;

  constructor(opts: SpeechDetectorOptions = {}) {
    this.thresholdRms = opts.thresholdRms ?? 500;
    this.onsetFrames = opts.onsetFrames ?? 3;
    this.hangoverFrames = opts.hangoverFrames ?? 8;
  }

  get speaking(): boolean {
    return this.#speaking;
  }

  /** Unvoiced frames since the last voiced one. */
  get unvoicedRun(): number {
    return this.#unvoicedRun;
  }

  push(frame: Int16Array): SpeechEdge {
    return this.pushRms(rmsEnergy(frame));
  }

  /** One frame, given by its RMS level. */
  pushRms(rms: number): SpeechEdge {
    return this.pushVoiced(rms >= this.thresholdRms);
  }

  /** One frame, already judged against `thresholdRms` (a caller that can stop summing early). */
  pushVoiced(voiced: boolean): SpeechEdge {
    if (voiced) {
      this.#voicedRun++;
      this.#unvoicedRun = 0;
      if (!this.#speaking && this.#voicedRun >= this.onsetFrames) {
        this.#speaking = true;
        return 'start';
      }
      return null;
    }
    this.#voicedRun = 0;
    this.#unvoicedRun++;
    if (this.#speaking && this.#unvoicedRun > this.hangoverFrames) {
      this.#speaking = false;
      return 'end';
    }
    return null;
  }

  reset(): void {
    this.#speaking = false;
    this.#voicedRun = 0;
    this.#unvoicedRun = 0;
  }
}
