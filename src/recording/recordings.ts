// The recordings of this instance's calls and the store they share with the fleet: a recorder per
// recorded call, its completion counted, and the retention sweep that removes recordings past their
// `retentionDays` (docs/recordings.md).
import type { Logger } from 'pino';
import type { MediaFormat } from '../audio/format.js';
import type { CallAudioListener } from '../call/audio-listener.js';
import { type Clock, realClock } from '../call/clock.js';
import type { CallRecordingPort, RecordingControlResult } from '../call/recording-port.js';
import type { AgentProfile } from '../config/types.js';
import type { RecordingSettings } from '../config/recording.js';
import type { Metrics } from '../metrics/metrics.js';
import { CallRecorder, type RecordingSummary } from './recorder.js';
import type { RecordingStore } from './store.js';

const DAY_MS = 86_400_000;

/** What became of a pause or resume: done, already so, or the call is not recorded here. */
export type { RecordingControlResult };
/** Expired recordings removed per sweep; the next sweep takes the rest. */
const SWEEP_BATCH = 500;
export const DEFAULT_SWEEP_EVERY_MS = 3_600_000;
/** How long the store may take to complete a recording before the call's record is saved without it. */
export const COMPLETE_TIMEOUT_MS = 120_000;

export interface RecordingsOptions {
  store: RecordingStore;
  metrics: Metrics;
  logger: Logger;
  /** Wall-clock milliseconds, for retention. */
  now?: () => number;
  /** The calls' clock (the process clock unless a test gives its own). */
  clock?: Clock;
  /** See COMPLETE_TIMEOUT_MS. */
  completeTimeoutMs?: number;
}

export class Recordings {
  readonly store: RecordingStore;
  readonly #metrics: Metrics;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #clock: Clock;
  readonly #completeTimeoutMs: number;
  #sweeper: NodeJS.Timeout | null = null;
  /** The sweep under way, if any: one at a time. */
  #sweeping: Promise<string[]> | null = null;
  /** The recorders of calls under way here, by call id. */
  readonly #live = new Map<string, CallRecorder>();

  constructor(opts: RecordingsOptions) {
    this.store = opts.store;
    this.#metrics = opts.metrics;
    this.#logger = opts.logger;
    this.#now = opts.now ?? Date.now;
    this.#clock = opts.clock ?? realClock;
    this.#completeTimeoutMs = opts.completeTimeoutMs ?? COMPLETE_TIMEOUT_MS;
  }

  /**
   * The recorder (an audio listener) and the recording port of a call whose profile asks for a
   * recording (the call's or campaign's settings are already in it); null when it is not recorded.
   */
  recordCall(call: {
    callSid: string;
    mediaFormat: MediaFormat;
    profile: AgentProfile;
  }): { listener: CallAudioListener; port: CallRecordingPort } | null {
    const settings = call.profile.recording;
    if (!settings?.enabled) return null;
    const recorder = this.start(call.callSid, call.mediaFormat, settings, this.#clock);
    if (!recorder) return null;
    return {
      listener: recorder,
      port: {
        consent: settings.consent,
        control: (action) => this.control(call.callSid, action),
        abandon: (reason) => recorder.abandon(reason),
      },
    };
  }

  /** Starts recording a call; null when the store will not take it (the call goes on unrecorded). */
  start(
    callSid: string,
    format: MediaFormat,
    settings: RecordingSettings,
    clock: Clock,
  ): CallRecorder | null {
    const kind = this.store.kind;
    let upload;
    try {
      upload = this.store.begin(callSid, this.#now() + settings.retentionDays * DAY_MS);
    } catch (err) {
      this.#metrics.recordingFailures.inc({ store: kind, stage: 'begin' });
      this.#logger.warn({ callSid, err: (err as Error).message }, 'the call cannot be recorded');
      return null;
    }
    const recorder = new CallRecorder({
      encoding: format.encoding,
      sampleRate: format.sampleRate,
      upload,
      clock,
      onFailed: (reason, stage) => {
        this.#metrics.recordingFailures.inc({ store: kind, stage });
        this.#logger.warn({ callSid, reason }, 'recording given up; the call goes on');
      },
    });
    this.#live.set(callSid, recorder);
    return recorder;
  }

  /**
   * Pauses or resumes the recording of a call under way here (admin API, agent functions), or
   * discards it: its recording was deleted while the call runs, so nothing more is written.
   */
  control(callSid: string, action: 'pause' | 'resume' | 'discard'): RecordingControlResult {
    const recorder = this.#live.get(callSid);
    if (!recorder || recorder.state === 'failed' || recorder.state === 'deleted') return 'not_recorded';
    if (action === 'discard') return recorder.discard() ? 'done' : 'unchanged';
    return (action === 'pause' ? recorder.pause() : recorder.resume()) ? 'done' : 'unchanged';
  }

  /** Completes the recording of a call that ended here; null when it was not recorded. Never rejects. */
  async completeCall(callSid: string): Promise<RecordingSummary | null> {
    const recorder = this.#live.get(callSid);
    return recorder ? this.complete(callSid, recorder) : null;
  }

  /** Completes a call's recording in the store, counting how it went. Never rejects. */
  async complete(callSid: string, recorder: CallRecorder): Promise<RecordingSummary> {
    const kind = this.store.kind;
    const startedMs = performance.now();
    const failedBefore = recorder.state === 'failed';
    let timer: NodeJS.Timeout | undefined;
    const summary = await Promise.race([
      recorder.finish(),
      new Promise<RecordingSummary>((resolve) => {
        timer = setTimeout(
          () => resolve({ ...recorder.summary(), state: 'failed' }),
          this.#completeTimeoutMs,
        );
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    if (this.#live.get(callSid) === recorder) this.#live.delete(callSid);
    const outcome = summary.state === 'ready' || summary.state === 'deleted' ? summary.state : 'failed';
    this.#metrics.recordings.inc({ store: kind, outcome });
    this.#metrics.recordingBytes.inc({ store: kind }, summary.bytes);
    if (summary.state === 'ready') {
      this.#metrics.recordingUpload.observe({ store: kind }, (performance.now() - startedMs) / 1000);
    } else if (!failedBefore && summary.state !== 'deleted') {
      this.#metrics.recordingFailures.inc({ store: kind, stage: 'complete' });
      this.#logger.warn({ callSid }, 'the store did not complete the recording');
    }
    return summary;
  }

  /** Removes recordings past their retention; returns their call ids. Never rejects. */
  async sweep(): Promise<string[]> {
    try {
      const removed = await this.store.removeExpired(this.#now(), SWEEP_BATCH);
      if (removed.length > 0) this.#logger.info({ removed: removed.length }, 'expired recordings removed');
      return removed;
    } catch (err) {
      this.#metrics.recordingFailures.inc({ store: this.store.kind, stage: 'retention' });
      this.#logger.warn({ err: (err as Error).message }, 'could not remove expired recordings');
      return [];
    }
  }

  /** Sweeps every `everyMs` until `close`. */
  startRetention(everyMs = DEFAULT_SWEEP_EVERY_MS): void {
    if (this.#sweeper !== null) return;
    this.#sweeper = setInterval(() => {
      if (this.#sweeping) return;
      this.#sweeping = this.sweep().finally(() => {
        this.#sweeping = null;
      });
    }, everyMs);
    this.#sweeper.unref();
  }

  /** Resolves once no periodic sweep is under way. */
  async swept(): Promise<void> {
    await this.#sweeping;
  }

  async close(): Promise<void> {
    if (this.#sweeper !== null) clearInterval(this.#sweeper);
    this.#sweeper = null;
    await this.#sweeping;
    await this.store.close();
  }
}
