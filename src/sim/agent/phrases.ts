// The bundled phrases (assets/phrases: raw μ-law 8 kHz, id → text in phrases.json) and how a reply
// reference (a phrase id or free text) becomes audio in a session's output format.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AudioFormat, transcode } from '../../audio/codec.js';
import { speakText } from '../speech/spoken-text.js';

/** assets/phrases at the package root, from src/sim/agent or dist/sim/agent alike. */
export const DEFAULT_PHRASE_DIR = fileURLToPath(new URL('../../../assets/phrases/', import.meta.url));

export const PHRASE_FORMAT: AudioFormat = Object.freeze({ encoding: 'mulaw', sampleRate: 8000 });

/** Replies the agent rotates through when the scenario has none left (or there is no scenario). */
export const FALLBACK_REPLY_IDS: readonly string[] = Object.freeze(['help', 'check', 'anything-else']);

/** The greeting spoken when a scenario names none but Settings asks for one. */
export const GREETING_ID = 'greeting';

export interface Utterance {
  text: string;
  /** Set when the audio is a bundled recording; cached per output format. */
  phraseId?: string;
  /** Raw μ-law 8 kHz. */
  audio: Buffer;
}

export class PhraseBook {
  readonly #texts: ReadonlyMap<string, string>;
  readonly #audio: ReadonlyMap<string, Buffer>;
  readonly #byText = new Map<string, string>();
  readonly #rendered = new Map<string, Buffer>();

  constructor(texts: ReadonlyMap<string, string>, audio: ReadonlyMap<string, Buffer>) {
    this.#texts = texts;
    this.#audio = audio;
    for (const [id, text] of texts) this.#byText.set(normalize(text), id);
  }

  /** Reads phrases.json and every `<id>.ulaw` it names; a missing recording is an error. */
  static async load(dir: string = DEFAULT_PHRASE_DIR): Promise<PhraseBook> {
    const index: unknown = JSON.parse(await readFile(join(dir, 'phrases.json'), 'utf8'));
    if (typeof index !== 'object' || index === null || Array.isArray(index)) {
      throw new Error(`${join(dir, 'phrases.json')} must map phrase ids to texts`);
    }
    const files = new Set(await readdir(dir));
    const texts = new Map<string, string>();
    const audio = new Map<string, Buffer>();
    for (const [id, text] of Object.entries(index)) {
      if (typeof text !== 'string') throw new Error(`phrase ${id}: text must be a string`);
      if (!files.has(`${id}.ulaw`)) throw new Error(`phrase ${id}: ${id}.ulaw is missing in ${dir}`);
      texts.set(id, text);
      audio.set(id, await readFile(join(dir, `${id}.ulaw`)));
    }
    return new PhraseBook(texts, audio);
  }

  has(id: string): boolean {
    return this.#texts.has(id);
  }

  ids(): string[] {
    return [...this.#texts.keys()];
  }

  /** A phrase id speaks that recording; text matching a phrase's text too; other text is synthesised. */
  async resolve(ref: string): Promise<Utterance> {
    const id = this.#texts.has(ref) ? ref : this.#byText.get(normalize(ref));
    if (id !== undefined) return { text: this.#texts.get(id)!, phraseId: id, audio: this.#audio.get(id)! };
    return { text: ref, audio: await speakText(ref) };
  }

  /** Text to speak (the speak endpoints): a phrase's recording when the text is one, else synthesised. */
  async speak(text: string): Promise<Utterance> {
    const id = this.#byText.get(normalize(text));
    if (id !== undefined) return { text: this.#texts.get(id)!, phraseId: id, audio: this.#audio.get(id)! };
    return { text, audio: await speakText(text) };
  }

  /** The utterance's audio in `format`, converted from μ-law 8 kHz. */
  render(utterance: Utterance, format: AudioFormat): Buffer {
    if (utterance.phraseId === undefined) return transcode(utterance.audio, PHRASE_FORMAT, format);
    const key = `${utterance.phraseId}|${format.encoding}|${format.sampleRate}`;
    let audio = this.#rendered.get(key);
    if (!audio) {
      audio = transcode(utterance.audio, PHRASE_FORMAT, format);
      this.#rendered.set(key, audio);
    }
    return audio;
  }
}

function normalize(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, ' ');
}
