// Any text the local agent says, as speech: synthesised by Flite on its own thread (flite-thread.ts)
// and kept per text here on the main thread, so a greeting, a voicemail or a scripted reply said on
// every call costs its synthesis once. Raw μ-law 8 kHz, like the bundled phrases.
import { encodeMulaw } from '../../audio/codec.js';
import { FliteThread } from './flite-thread.js';

/** Texts kept; a campaign's greetings differ per contact, so the oldest make way. */
const CACHE_ENTRIES = 256;
/** Silence after the words, so the next sound does not butt against the last syllable. */
const TAIL_MS = 150;

const cache = new Map<string, Buffer>();
/** Texts being synthesised: a second request for one waits for the same answer. */
const inFlight = new Map<string, Promise<Buffer>>();
const flite = new FliteThread();

/** Starts the synthesis thread and compiles Flite there, so the first text does not wait for it. */
export function warmSpeech(): Promise<void> {
  return flite.warm();
}

export function speakText(text: string): Promise<Buffer> {
  const key = text.replace(/\s+/g, ' ').trim();
  const kept = cache.get(key);
  if (kept) {
    // Most recently used last: Map keeps insertion order.
    cache.delete(key);
    cache.set(key, kept);
    return Promise.resolve(kept);
  }
  let pending = inFlight.get(key);
  if (!pending) {
    pending = synthesize(key).finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

async function synthesize(key: string): Promise<Buffer> {
  const { samples: words } = await flite.synthesize(key);
  const samples = new Int16Array(words.length + (TAIL_MS * 8000) / 1000);
  samples.set(words);
  const audio = encodeMulaw(samples);
  cache.set(key, audio);
  if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  return audio;
}
