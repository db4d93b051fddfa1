// Audio for text that no bundled phrase matches. The local agent has no speech synthesizer, so it
// stands in with a voiced buzz shaped like the words: one syllable-like burst per word, lasting
// about as long as the word would take to say, so timing and barge-in behave as with real speech.
import { encodeMulaw } from '../../audio/codec.js';

const RATE = 8000;
const FUNDAMENTAL_HZ = 130;
const PEAK = 6000;
const GAP_MS = 70;
const MS_PER_LETTER = 55;
const MAX_TOTAL_MS = 10_000;

/** Raw μ-law 8 kHz mono, like the bundled phrases. */
export function synthesizePlaceholderSpeech(text: string): Buffer {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const wordMs = words.map((w) => Math.min(600, Math.max(120, w.length * MS_PER_LETTER)));
  let totalMs = wordMs.reduce((sum, ms) => sum + ms + GAP_MS, 0);
  totalMs = Math.min(Math.max(totalMs, 300), MAX_TOTAL_MS);

  const samples = new Int16Array(Math.round((totalMs * RATE) / 1000));
  let at = 0;
  for (const ms of wordMs.length > 0 ? wordMs : [230]) {
    const length = Math.round((ms * RATE) / 1000);
    if (at + length > samples.length) break;
    for (let i = 0; i < length; i++) {
      const t = i / RATE;
      // Hann envelope: each word rises and falls like a syllable instead of clicking on and off.
      const envelope = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / length);
      const voice =
        Math.sin(2 * Math.PI * FUNDAMENTAL_HZ * t) +
        0.5 * Math.sin(2 * Math.PI * 2 * FUNDAMENTAL_HZ * t) +
        0.25 * Math.sin(2 * Math.PI * 3 * FUNDAMENTAL_HZ * t);
      samples[at + i] = Math.round((PEAK * envelope * voice) / 1.75);
    }
    at += length + Math.round((GAP_MS * RATE) / 1000);
  }
  return encodeMulaw(samples);
}
