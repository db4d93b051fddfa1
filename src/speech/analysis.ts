// Post-call analysis (ANALYSIS=on): each ended call's transcript goes to the text intelligence
// endpoint (read-client.ts) and the summary, sentiment, topics and intents join the call's record.
//
// - Never delays the end of a call: `enqueue` only writes a job to the store's durable queue; a
//   worker loop works it off. A restart loses nothing queued (the queue is the store's).
// - Bounded: the queue (`maxQueued`, past it the call is skipped with a reason), the attempts per
//   call, the text sent (transcript.ts), the time of each request.
// - Retried with backoff on what may work later (network, timeout, 429, 5xx); never retried on a
//   refused request (INVALID_QUERY_PARAMETER, PAYLOAD_ERROR, any other 4xx): that is recorded as
//   `failed` with the service's reason.
// - A profile whose language the endpoint does not take is `skipped` with the reason, never sent.
import type { Logger } from 'pino';
import { SpeechServiceError } from '../errors.js';
import { backoffDelayMs } from '../retry.js';
import type { Metrics } from '../metrics/metrics.js';
import type { AnalysisJobs, CallRecords, ClaimedAnalysisJob } from '../store/store.js';
import type { AnalysisOutcome, CallAnalysis } from '../store/call-analysis.js';
import type { SpeechApi } from './http.js';
import { analysisLanguage, type ReadResult, readText } from './read-client.js';
import { type DialogueTurn, transcriptText } from './transcript.js';

export interface AnalysisLimits {
  /** Jobs the queue holds (all instances together); past it a call is skipped. */
  maxQueued: number;
  /** Requests per call before it is given up as failed. */
  maxAttempts: number;
  /** Characters of transcript sent. */
  maxTextChars: number;
  /** Backoff: the first retry waits this long, each later one twice as long, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long a claimed job is this worker's; must outlast a request's timeout. */
  leaseMs: number;
  /** How often an idle worker looks for due jobs. */
  pollIntervalMs: number;
}

export const DEFAULT_ANALYSIS_LIMITS: Readonly<AnalysisLimits> = Object.freeze({
  maxQueued: 10_000,
  maxAttempts: 8,
  maxTextChars: 50_000,
  baseDelayMs: 5_000,
  maxDelayMs: 10 * 60_000,
  leaseMs: 2 * 60_000,
  pollIntervalMs: 2_000,
});

/** What a call's record must carry to be analysed. */
export interface AnalysisSubject {
  callSid: string;
  profile: string;
  turns: readonly DialogueTurn[];
}

/** A call's record as the store keeps it. */
type StoredCallRecord = NonNullable<Awaited<ReturnType<CallRecords['getCallRecord']>>>;

export interface AnalysisTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface AnalysisDeps {
  store: AnalysisJobs & Pick<CallRecords, 'getCallRecord' | 'saveCallRecord'>;
  api: SpeechApi;
  /** The language a profile speaks, or undefined for a profile that no longer exists. */
  profileLanguage(profile: string): string | undefined;
  metrics: Pick<Metrics, 'analyses' | 'analysisDuration' | 'analysisQueueDepth'>;
  logger: Logger;
  /** Names this worker's claims (INSTANCE_ID). */
  consumer: string;
  limits?: Partial<AnalysisLimits>;
  /** Wall clock in ms, for the outcome's time and request durations. */
  now?: () => number;
  timers?: AnalysisTimers;
}

const realTimers: AnalysisTimers = {
  setTimeout: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    timer.unref();
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class AnalysisService {
  readonly limits: AnalysisLimits;
  readonly #deps: AnalysisDeps;
  readonly #now: () => number;
  readonly #timers: AnalysisTimers;
  #running = false;
  #timer: unknown = null;
  #current: Promise<unknown> | null = null;
  #abort = new AbortController();
  readonly #listeners: Array<(record: StoredCallRecord) => void> = [];

  constructor(deps: AnalysisDeps) {
    this.#deps = deps;
    this.limits = { ...DEFAULT_ANALYSIS_LIMITS, ...deps.limits };
    this.#now = deps.now ?? Date.now;
    this.#timers = deps.timers ?? realTimers;
  }

  /**
   * Queues the analysis of an ended call whose record is saved. Never throws and never waits on
   * the speech service: a call that cannot be analysed gets a `skipped` outcome instead.
   */
  async enqueue(record: AnalysisSubject): Promise<void> {
    const { callSid } = record;
    try {
      const language = this.#deps.profileLanguage(record.profile);
      if (language === undefined)
        return await this.#skip(callSid, `profile ${JSON.stringify(record.profile)} is not configured`);
      const accepted = analysisLanguage(language);
      if (!accepted.ok) return await this.#skip(callSid, accepted.reason);
      const { text, truncated } = transcriptText(record.turns, this.limits.maxTextChars);
      if (text === '') return await this.#skip(callSid, 'nothing was said on the call');
      const queued = await this.#deps.store.enqueueAnalysisJob(
        { callSid, language: accepted.language, text, truncated },
        this.limits.maxQueued,
      );
      if (queued === 'full')
        return await this.#skip(callSid, `the analysis queue is full (${this.limits.maxQueued} calls)`);
      if (queued === 'queued') this.#kick();
    } catch (err) {
      this.#deps.logger.error({ err: (err as Error).message, callSid }, 'could not queue the call analysis');
    }
  }

  /**
   * Calls `listener` with each record once its analysis is written (ok, skipped or failed), for
   * the event the operator gateway receives. A listener that throws is logged, never fatal.
   */
  onAnalysed(listener: (record: StoredCallRecord) => void): void {
    this.#listeners.push(listener);
  }

  /** Starts the worker loop; it runs until `stop`. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#abort = new AbortController();
    this.#schedule(0);
  }

  /** Stops the loop; a request in flight is abandoned and its job handed back for later. */
  async stop(): Promise<void> {
    this.#running = false;
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#timer = null;
    this.#abort.abort();
    await this.#current?.catch(() => undefined);
  }

  /** Works off one due job; false when none was due. The loop calls it; tests drive it directly. */
  async runOnce(): Promise<boolean> {
    const job = await this.#deps.store.claimAnalysisJob(this.#deps.consumer, this.limits.leaseMs);
    if (!job) return false;
    await this.#work(job);
    return true;
  }

  async #work(job: ClaimedAnalysisJob): Promise<void> {
    const started = this.#now();
    const seconds = () => Math.max(0, this.#now() - started) / 1000;
    let result: ReadResult;
    try {
      result = await readText(this.#deps.api, { language: job.language, text: job.text }, this.#abort.signal);
    } catch (err) {
      const error =
        err instanceof SpeechServiceError
          ? err
          : new SpeechServiceError(`analysis failed: ${(err as Error).message}`, { retryable: true });
      if (this.#abort.signal.aborted) {
        // Shutting down: not the service's fault, and not an attempt worth counting against it.
        await this.#deps.store.retryAnalysisJobLater(job, 0, 'interrupted by shutdown');
        return;
      }
      if (error.retryable && job.attempts < this.limits.maxAttempts) {
        this.#deps.metrics.analysisDuration.observe({ outcome: 'retried' }, seconds());
        const delayMs = backoffDelayMs(job.attempts, {
          firstDelayMs: this.limits.baseDelayMs,
          maxDelayMs: this.limits.maxDelayMs,
        });
        this.#deps.logger.info(
          { callSid: job.callSid, attempt: job.attempts, retryInMs: delayMs, err: error.message },
          'call analysis failed; retrying later',
        );
        await this.#deps.store.retryAnalysisJobLater(job, delayMs, error.message);
        return;
      }
      this.#deps.metrics.analysisDuration.observe({ outcome: 'failed' }, seconds());
      const reason = error.retryable
        ? `gave up after ${job.attempts} attempts: ${error.message}`
        : error.message;
      await this.#finish(job, { outcome: 'failed', reason, attempts: job.attempts });
      return;
    }
    this.#deps.metrics.analysisDuration.observe({ outcome: 'ok' }, seconds());
    const analysis: Omit<CallAnalysis, 'at'> = {
      outcome: 'ok',
      attempts: job.attempts,
      topics: result.topics,
      intents: result.intents,
    };
    if (result.summary !== undefined) analysis.summary = result.summary;
    if (result.sentiment !== undefined) analysis.sentiment = result.sentiment;
    if (result.sentimentScore !== undefined) analysis.sentimentScore = result.sentimentScore;
    if (result.language !== undefined) analysis.language = result.language;
    if (job.truncated) analysis.truncated = true;
    await this.#finish(job, analysis);
  }

  /** Writes the outcome into the record, then drops the job (at least once: a crash between re-runs it). */
  async #finish(job: ClaimedAnalysisJob, analysis: Omit<CallAnalysis, 'at'>): Promise<void> {
    await this.#record(job.callSid, analysis);
    await this.#deps.store.completeAnalysisJob(job);
  }

  async #skip(callSid: string, reason: string): Promise<void> {
    await this.#record(callSid, { outcome: 'skipped', reason, attempts: 0 });
  }

  async #record(callSid: string, analysis: Omit<CallAnalysis, 'at'>): Promise<void> {
    this.#count(analysis.outcome);
    this.#deps.logger.info(
      { callSid, analysis: analysis.outcome, ...(analysis.reason ? { reason: analysis.reason } : {}) },
      'call analysis finished',
    );
    const record = await this.#deps.store.getCallRecord(callSid);
    // Past its retention (or never saved): nothing to add the analysis to.
    if (!record) return;
    const analysed: StoredCallRecord = {
      ...record,
      analysis: { ...analysis, at: new Date(this.#now()).toISOString() },
    };
    await this.#deps.store.saveCallRecord(analysed);
    for (const listener of this.#listeners) {
      try {
        listener(analysed);
      } catch (err) {
        this.#deps.logger.error({ err: (err as Error).message, callSid }, 'analysis listener failed');
      }
    }
  }

  #count(outcome: AnalysisOutcome): void {
    this.#deps.metrics.analyses.inc({ outcome });
  }

  /** New work: an idle loop looks now rather than at its next poll. */
  #kick(): void {
    if (!this.#running || this.#current !== null) return;
    if (this.#timer !== null) this.#timers.clearTimeout(this.#timer);
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    this.#timer = this.#timers.setTimeout(() => {
      this.#timer = null;
      void this.#tick();
    }, ms);
  }

  async #tick(): Promise<void> {
    if (!this.#running) return;
    let worked = false;
    const run = this.runOnce();
    this.#current = run;
    try {
      worked = await run;
      if (!worked) this.#deps.metrics.analysisQueueDepth.set(await this.#deps.store.analysisJobCount());
    } catch (err) {
      // The store is away: try again at the next poll.
      this.#deps.logger.warn(
        { err: (err as Error).message },
        'call analysis worker could not reach the store',
      );
    } finally {
      this.#current = null;
    }
    if (this.#running) this.#schedule(worked ? 0 : this.limits.pollIntervalMs);
  }
}
