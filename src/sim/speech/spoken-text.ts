// Any text the local agent says, as speech: synthesised by Flite (flite.ts) and kept per text, so
// a greeting, a voicemail or a scripted reply said on every call costs its synthesis once. Raw
// μ-law 8 kHz, like the bundled phrases.
import { encodeMulaw } from '../../audio/codec.js';
import { fliteSynthesize } from './flite.js';

/** Texts kept; a campaign's greetings differ per contact, so the oldest make way. */
const CACHE_ENTRIES = 256;
/** Silence after the words, so the next sound does not butt against the last syllable. */
const TAIL_MS = 150;

const cache = new Map<string, Buffer>();

export function speakText(text: string): Buffer {
  const key = text.replace(/\s+/g, ' ').trim();
  const kept = cache.get(key);
  if (kept) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(key);
    cache.set(key, kept);
    return kept;
  }
  const words = fliteSynthesize(key);
  const samples = new Int16Array(words.length + (TAIL_MS * 8000) / 1000);
  samples.set(words);
  const audio = encodeMulaw(samples);
  cache.set(key, audio);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return audio;
}
