// What a caller hears when no agent can take the call. A profile may name its own recording
// (`fallback.audioFile`, raw μ-law 8 kHz like the bundled phrases), read once per file and format
// and converted when the stream is not μ-law 8 kHz; without one the call plays the "unavailable"
// prompt through its `PromptPlayer` (rendered by the speech service, else the bundled recording,
// which `fallbackAudio(undefined, format)` reads where no player is at hand).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transcode } from '../../audio/codec.js';
import type { MediaFormat } from '../../audio/format.js';
import type { PromptKind } from '../../config/prompts.js';

/** Both src/call and dist/call sit two levels below the package root. */
export const BUNDLED_FALLBACK = fileURLToPath(
  new URL('../../../assets/phrases/unavailable.ulaw', import.meta.url),
);

/**
 * A prompt in the stream's format, rendered or bundled (src/speech/prompts.ts `promptAudio` fits):
 * a fixed one, or a campaign's voicemail given as `text`; null when there is none.
 */
export type PromptPlayer = (
  kind: PromptKind,
  format: MediaFormat,
  opts?: PromptOptions,
) => Promise<Buffer | null>;

export interface PromptOptions {
  text?: string;
  /**
   * Where prompts are not rendered, the built-in local voice may speak the text (the consent prompt
   * of a recorded call). A campaign's voicemail leaves it unset: without rendering, the agent speaks
   * the voicemail itself, as one of its turns.
   */
  localVoice?: boolean;
}

const cache = new Map<string, Buffer | null>();

/** The recording at `file` (default: the bundled "unavailable") in `format`; null when unreadable. */
export function fallbackAudio(file: string | undefined, format: MediaFormat): Buffer | null {
  const path = file ?? BUNDLED_FALLBACK;
  const key = `${path}|${format.encoding}|${format.sampleRate}`;
  if (!cache.has(key)) {
    let audio: Buffer | null;
    try {
      audio = transcode(readFileSync(path), { encoding: 'mulaw', sampleRate: 8000 }, format);
    } catch {
      audio = null;
    }
    cache.set(key, audio);
  }
  return cache.get(key) ?? null;
}
