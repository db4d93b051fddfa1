// The end of a voicemail greeting, judged from the audio, for carriers whose detection says only
// "machine" and never when its greeting ends (docs/protocols/answering-machine-detection.md,
// section 2): once the answerer has been heard and then falls silent this long, the greeting is
// taken as over and the voicemail may start. A beep counts as sound, so the silence that ends a
// greeting is the one after its beep.

/** Silence after the greeting that ends it: longer than the pauses between a greeting's sentences. */
export const GREETING_END_SILENCE_MS = 1_500;

export class GreetingEnd {
  #heard = false;

  /**
   * One frame of the answerer's audio, as the call's speech detector reads it: whether they speak,
   * and the silence since they last did. True when a greeting that was heard has fallen silent.
   */
  observe(speaking: boolean, silenceMs: number): boolean {
    if (speaking) {
      this.#heard = true;
      return false;
    }
    return this.#heard && silenceMs >= GREETING_END_SILENCE_MS;
  }
}
