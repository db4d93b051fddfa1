// Pre-recorded voicemails (`amd.voicemail.audioUrl`): a WAV the operator hosts, fetched once,
// bounded in size, time and length, kept on disk under DATA_DIR/voicemails by a hash of its URL
// (like the rendered prompts under DATA_DIR/prompts), and converted to each call's stream format.
// A URL that cannot be fetched or read answers with the reason, and is not asked again for a while,
// so the machines of a campaign do not each wait on a dead server. The URL is an API caller's, so it
// is fetched through the fetch policy (src/trust/fetch-policy.ts): public addresses only, and a
// reason that names the rule, never what the remote answered.
import { createHash, randomUUID } from 'node:crypto';
import { readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeAudio } from '../../audio/codec.js';
import type { MediaFormat } from '../../audio/format.js';
import { readWav, resampleAny, type WavAudio } from '../../audio/wav.js';
import { type FetchPolicy, FetchProblem } from '../../trust/fetch-policy.js';
import { mkdirPrivate, writePrivateFile } from '../../store/private-files.js';

export type VoicemailRecording = { audio: Buffer } | { problem: string };

/** A call's way to the recording at a URL, in its own format (VoicemailRecordings.get fits). */
export type VoicemailRecordingSource = (url: string, format: MediaFormat) => Promise<VoicemailRecording>;

export interface VoicemailRecordingsOptions {
  /** Where fetched recordings are kept: `$DATA_DIR/voicemails`. */
  cacheDir: string;
  /** Where a recording may be fetched from (the fetch policy, docs/security.md). */
  fetchPolicy: FetchPolicy;
  /** The whole fetch, headers and body. */
  fetchTimeoutMs?: number;
  /** The largest file taken (a minute of 16-bit 44.1 kHz stereo is about 10 MB). */
  maxBytes?: number;
  /** The longest message taken: the call waits this long at most for it to be heard. */
  maxDurationMs?: number;
  /** After a failure, how long the URL answers with it without being fetched again. */
  retryAfterMs?: number;
  now?: () => number;
}

export const VOICEMAIL_FETCH_TIMEOUT_MS = 10_000;
export const MAX_VOICEMAIL_BYTES = 12 * 1024 * 1024;
export const MAX_VOICEMAIL_DURATION_MS = 75_000;
const DEFAULT_RETRY_AFTER_MS = 60_000;
/** Converted recordings held in memory, most recently used kept. */
const MAX_MEMORY_ENTRIES = 16;

class RecordingProblem extends Error {}

export class VoicemailRecordings {
  readonly #opts: VoicemailRecordingsOptions;
  readonly #now: () => number;
  readonly #converted = new Map<string, Buffer>();
  readonly #inFlight = new Map<string, Promise<WavAudio>>();
  readonly #failed = new Map<string, { atMs: number; problem: string }>();

  constructor(opts: VoicemailRecordingsOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** The recording at `url` in `format`, or why there is none. Never throws. */
  async get(url: string, format: MediaFormat): Promise<VoicemailRecording> {
    const memoryKey = `${url}|${format.encoding}|${format.sampleRate}`;
    const remembered = this.#converted.get(memoryKey);
    if (remembered) {
      this.#remember(memoryKey, remembered);
      return { audio: remembered };
    }
    const failed = this.#failed.get(url);
    const retryAfterMs = this.#opts.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS;
    if (failed && this.#now() - failed.atMs < retryAfterMs) return { problem: failed.problem };
    let wav: Promise<WavAudio> | undefined = this.#inFlight.get(url);
    if (!wav) {
      wav = this.#load(url).finally(() => this.#inFlight.delete(url));
      this.#inFlight.set(url, wav);
    }
    try {
      const read = await wav;
      const audio = encodeAudio(
        resampleAny(read.samples, read.sampleRate, format.sampleRate),
        format.encoding,
      );
      this.#failed.delete(url);
      this.#remember(memoryKey, audio);
      return { audio };
    } catch (err) {
      const problem =
        err instanceof RecordingProblem
          ? err.message
          : `the recording could not be read: ${(err as Error).message}`;
      this.#failed.set(url, { atMs: this.#now(), problem });
      return { problem };
    }
  }

  /** From disk when fetched before, else fetched, checked and stored. */
  async #load(url: string): Promise<WavAudio> {
    const file = join(this.#opts.cacheDir, `${createHash('sha256').update(url).digest('hex')}.wav`);
    const cached = await readFile(file).catch(() => null);
    if (cached) {
      try {
        return this.#check(cached);
      } catch {
        // A file that no longer reads is fetched again.
      }
    }
    const bytes = await this.#fetch(url);
    const wav = this.#check(bytes);
    await this.#store(file, bytes);
    return wav;
  }

  #check(bytes: Buffer): WavAudio {
    let wav: WavAudio;
    try {
      wav = readWav(bytes);
    } catch (err) {
      throw new RecordingProblem(`the recording is not a WAV the server can read: ${(err as Error).message}`);
    }
    const durationMs = (wav.samples.length / wav.sampleRate) * 1000;
    const maxMs = this.#opts.maxDurationMs ?? MAX_VOICEMAIL_DURATION_MS;
    if (wav.samples.length === 0) throw new RecordingProblem('the recording is empty');
    if (durationMs > maxMs) {
      throw new RecordingProblem(
        `the recording lasts ${Math.round(durationMs / 1000)} s, over ${maxMs / 1000} s`,
      );
    }
    return wav;
  }

  async #fetch(url: string): Promise<Buffer> {
    try {
      return await this.#opts.fetchPolicy.get(url, {
        timeoutMs: this.#opts.fetchTimeoutMs ?? VOICEMAIL_FETCH_TIMEOUT_MS,
        maxBytes: this.#opts.maxBytes ?? MAX_VOICEMAIL_BYTES,
        headers: { accept: 'audio/wav, audio/x-wav, */*' },
      });
    } catch (err) {
      const message = err instanceof FetchProblem ? err.message : 'failed';
      throw new RecordingProblem(
        `fetching the recording ${err instanceof FetchProblem && err.code === 'CALLBRIDGE_FETCH_REFUSED' ? 'was ' : ''}${message}`,
      );
    }
  }

  /** Written beside, then renamed into place: a reader never sees half a file. A failure only costs a fetch. */
  async #store(file: string, bytes: Buffer): Promise<void> {
    try {
      await mkdirPrivate(this.#opts.cacheDir);
      const partial = `${file}.${randomUUID()}.tmp`;
      await writePrivateFile(partial, bytes);
      await rename(partial, file);
    } catch {
      // The next process fetches it again.
    }
  }

  #remember(key: string, audio: Buffer): void {
    this.#converted.delete(key);
    this.#converted.set(key, audio);
    if (this.#converted.size > MAX_MEMORY_ENTRIES)
      this.#converted.delete(this.#converted.keys().next().value!);
  }
}
