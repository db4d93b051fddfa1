// The fixed things a caller hears without an agent: the "unavailable" message, the goodbye when the
// server drains, the decline when it is at capacity, and a campaign's voicemail given as text.
//
// With config/prompts.json they are rendered by the speak endpoints (speak-client.ts) in the voice
// it names, in the phone leg's encoding and rate, and cached on disk under DATA_DIR/prompts by a
// hash of text, voice and format, so each is rendered once per deployment, at start or on first
// use. The bundled recordings (assets/phrases) play whenever rendering is off or the service cannot
// be reached; after a failure the service is left alone for a while, so a call never waits on it.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { type AudioFormat, transcode } from '../audio/codec.js';
import {
  DEFAULT_PROMPT_TEXTS,
  type FixedPromptKind,
  MAX_PROMPT_CHARS,
  PROMPT_KINDS,
  type PromptKind,
  type PromptsConfig,
} from '../config/prompts.js';
import type { Metrics } from '../metrics/metrics.js';
import { mkdirPrivate, writePrivateFile } from '../store/private-files.js';
import type { SpeechApi } from './http.js';
import { renderSpeech } from './speak-client.js';

/** Both src/speech and dist/speech sit two levels below the package root. */
const PHRASES = fileURLToPath(new URL('../../assets/phrases/', import.meta.url));
const BUNDLED_FORMAT: AudioFormat = { encoding: 'mulaw', sampleRate: 8000 };

/** The recording each prompt falls back to; a voicemail's text has none. */
export const BUNDLED_PROMPTS: Readonly<Record<PromptKind, string | null>> = Object.freeze({
  unavailable: join(PHRASES, 'unavailable.ulaw'),
  at_capacity: join(PHRASES, 'unavailable.ulaw'),
  drain_goodbye: join(PHRASES, 'goodbye.ulaw'),
  voicemail: null,
});

export interface PromptAudioDeps {
  /** config/prompts.json; null: bundled recordings only. */
  config: PromptsConfig | null;
  /** The speak endpoints' host; null: bundled recordings only. */
  api: SpeechApi | null;
  /** Where rendered audio is kept: `$DATA_DIR/prompts`. */
  cacheDir: string;
  logger: Logger;
  metrics?: Pick<Metrics, 'promptRenders'>;
  now?: () => number;
  /** After a failed render, how long callers get the bundled audio without asking the service. */
  retryAfterMs?: number;
  /** Rendered files kept on disk; past it the oldest go (voicemails are one per contact). */
  maxCacheFiles?: number;
  /**
   * Speech made on this machine (raw μ-law 8 kHz), for a text that has no bundled recording when
   * prompts are not rendered: the built-in local agent's voice, so a recording's text consent is
   * heard with no speech service (docs/recordings.md). Absent: such a text has no audio.
   */
  localVoice?: (text: string) => Promise<Buffer>;
}

export type PromptSource = 'memory' | 'disk' | 'rendered' | 'bundled' | 'local';

const DEFAULT_RETRY_AFTER_MS = 60_000;
const DEFAULT_MAX_CACHE_FILES = 1000;
/** Rendered prompts held in memory, most recently used kept. */
const MAX_MEMORY_ENTRIES = 64;

export class PromptAudio {
  readonly #deps: PromptAudioDeps;
  readonly #now: () => number;
  readonly #memory = new Map<string, Buffer>();
  readonly #inFlight = new Map<string, Promise<Buffer | null>>();
  readonly #bundled = new Map<string, Buffer | null>();
  #failedAtMs: number | null = null;
  #writes = 0;

  constructor(deps: PromptAudioDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Whether prompts are rendered at all (a config and a speech host). */
  get rendering(): boolean {
    return this.#deps.config !== null && this.#deps.api !== null;
  }

  /**
   * The prompt's audio in `format` (raw, no header), or null when there is none: a voicemail whose
   * text cannot be rendered. `text` is required for `voicemail` and ignored otherwise.
   */
  async promptAudio(
    kind: PromptKind,
    format: AudioFormat,
    opts: { text?: string; localVoice?: boolean } = {},
  ): Promise<Buffer | null> {
    return (await this.promptAudioWithSource(kind, format, opts)).audio;
  }

  /** As promptAudio, saying where the audio came from. */
  async promptAudioWithSource(
    kind: PromptKind,
    format: AudioFormat,
    opts: { text?: string; localVoice?: boolean } = {},
  ): Promise<{ audio: Buffer | null; source: PromptSource }> {
    if (!(PROMPT_KINDS as readonly string[]).includes(kind))
      throw new RangeError(`unknown prompt ${String(kind)}`);
    const text = this.#text(kind, opts.text);
    const done = (audio: Buffer | null, source: PromptSource) => {
      // Memory and disk are one label: both mean no request was made.
      this.#deps.metrics?.promptRenders.inc({
        kind,
        source: source === 'memory' || source === 'disk' ? 'cache' : source,
      });
      return { audio, source };
    };
    const config = this.#deps.config;
    const api = this.#deps.api;
    if (config === null || api === null || text === null) {
      const spoken =
        text === null || opts.localVoice !== true ? null : await this.#localAudio(kind, text, format);
      if (spoken) return done(spoken, 'local');
      return done(await this.#bundledAudio(kind, format), 'bundled');
    }

    const key = cacheKey(text, config, format);
    const remembered = this.#memory.get(key);
    if (remembered) {
      this.#remember(key, remembered);
      return done(remembered, 'memory');
    }
    const cached = await readFile(this.#file(key)).catch(() => null);
    if (cached && cached.length > 0) {
      this.#remember(key, cached);
      return done(cached, 'disk');
    }
    if (this.#coolingDown()) return done(await this.#bundledAudio(kind, format), 'bundled');

    let rendering = this.#inFlight.get(key);
    if (!rendering) {
      rendering = this.#render(key, text, config, api, format).finally(() => this.#inFlight.delete(key));
      this.#inFlight.set(key, rendering);
    }
    const rendered = await rendering;
    if (rendered) return done(rendered, 'rendered');
    return done(await this.#bundledAudio(kind, format), 'bundled');
  }

  /** `render: start`: every fixed prompt in every configured format, now. Never throws. */
  async warm(): Promise<void> {
    const config = this.#deps.config;
    if (!this.rendering || config === null) return;
    for (const format of config.formats) {
      for (const kind of Object.keys(DEFAULT_PROMPT_TEXTS) as FixedPromptKind[]) {
        await this.promptAudio(kind, format).catch(() => null);
      }
    }
  }

  #text(kind: PromptKind, given: string | undefined): string | null {
    if (kind === 'voicemail') {
      const text = given?.trim() ?? '';
      return text === '' ? null : text.slice(0, MAX_PROMPT_CHARS);
    }
    return this.#deps.config?.texts[kind] ?? DEFAULT_PROMPT_TEXTS[kind];
  }

  async #render(
    key: string,
    text: string,
    config: PromptsConfig,
    api: SpeechApi,
    format: AudioFormat,
  ): Promise<Buffer | null> {
    let audio: Buffer;
    try {
      audio = await renderSpeech(api, { text, voice: config.voice, format });
    } catch (err) {
      this.#failedAtMs = this.#now();
      this.#deps.logger.warn(
        { err: (err as Error).message, retryAfterMs: this.#deps.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS },
        'could not render a prompt; the bundled recording plays instead',
      );
      return null;
    }
    this.#failedAtMs = null;
    this.#remember(key, audio);
    await this.#store(key, audio);
    return audio;
  }

  /** Written beside, then renamed into place: a reader never sees half a file. */
  async #store(key: string, audio: Buffer): Promise<void> {
    const dir = this.#deps.cacheDir;
    try {
      await mkdirPrivate(dir);
      const partial = join(dir, `.${key}.${randomUUID()}.tmp`);
      await writePrivateFile(partial, audio);
      await rename(partial, this.#file(key));
      if (++this.#writes % 20 === 1) await this.#prune();
    } catch (err) {
      this.#deps.logger.warn({ err: (err as Error).message }, 'could not cache a rendered prompt on disk');
    }
  }

  /** Keeps the newest `maxCacheFiles` rendered files. */
  async #prune(): Promise<void> {
    const max = this.#deps.maxCacheFiles ?? DEFAULT_MAX_CACHE_FILES;
    const names = (await readdir(this.#deps.cacheDir)).filter((name) => name.endsWith('.raw'));
    if (names.length <= max) return;
    const dated = await Promise.all(
      names.map(async (name) => ({
        name,
        mtimeMs: (await stat(join(this.#deps.cacheDir, name)).catch(() => null))?.mtimeMs ?? 0,
      })),
    );
    dated.sort((a, b) => a.mtimeMs - b.mtimeMs);
    for (const { name } of dated.slice(0, dated.length - max)) {
      await rm(join(this.#deps.cacheDir, name), { force: true });
    }
  }

  #file(key: string): string {
    return join(this.#deps.cacheDir, `${key}.raw`);
  }

  #remember(key: string, audio: Buffer): void {
    this.#memory.delete(key);
    this.#memory.set(key, audio);
    if (this.#memory.size > MAX_MEMORY_ENTRIES) this.#memory.delete(this.#memory.keys().next().value!);
  }

  #coolingDown(): boolean {
    if (this.#failedAtMs === null) return false;
    return this.#now() - this.#failedAtMs < (this.#deps.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS);
  }

  /** A voicemail's text in the local voice, when there is one; the fixed prompts keep their recordings. */
  async #localAudio(kind: PromptKind, text: string, format: AudioFormat): Promise<Buffer | null> {
    const voice = this.#deps.localVoice;
    if (voice === undefined || BUNDLED_PROMPTS[kind] !== null) return null;
    try {
      return transcode(await voice(text), BUNDLED_FORMAT, format);
    } catch (err) {
      this.#deps.logger.warn({ err: (err as Error).message }, 'the local voice could not speak a prompt');
      return null;
    }
  }

  async #bundledAudio(kind: PromptKind, format: AudioFormat): Promise<Buffer | null> {
    const path = BUNDLED_PROMPTS[kind];
    if (path === null) return null;
    const key = `${path}|${format.encoding}|${format.sampleRate}`;
    if (!this.#bundled.has(key)) {
      const raw = await readFile(path).catch(() => null);
      this.#bundled.set(key, raw === null ? null : transcode(raw, BUNDLED_FORMAT, format));
    }
    return this.#bundled.get(key) ?? null;
  }
}

/** The cache key: what was said, by which voice, in which format. */
export function cacheKey(text: string, config: Pick<PromptsConfig, 'voice'>, format: AudioFormat): string {
  const { version, model, speed } = config.voice;
  return createHash('sha256')
    .update(JSON.stringify([text, version, model, speed ?? null, format.encoding, format.sampleRate]))
    .digest('hex');
}
