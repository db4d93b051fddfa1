// The call's latency figures, taken as they happen: a person's wait for the agent after answering
// an outbound call, the first agent audio, the agent's own first audio after SettingsApplied, the
// perceived latency from the end of the caller's speech to the agent's answer reaching them, and
// the latencies the agent reports itself. Each lands in the metrics and in the call log.
import type { AgentServerMessage } from '../../agent/protocol.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { CallLog } from '../record/call-log.js';
import type { Clock } from '../clock.js';

export type LatencyMetrics = Pick<
  Metrics,
  'amdHumanWait' | 'firstAudio' | 'agentFirstAudio' | 'perceivedLatency' | 'agentReportedLatency'
>;

export interface LatencyObserverOptions {
  metrics: LatencyMetrics;
  log: Pick<CallLog, 'firstAudio' | 'perceived' | 'agentReported'>;
  clock: Clock;
  carrier: string;
  /** When the call was answered, on `clock`. */
  answeredAtMs: number;
  /** What the observer reads of the rest of the call when audio goes out. */
  view: {
    /** An outbound call's answerer was found to be a person (its gate is open). */
    personAnswered(): boolean;
    /** The agent session was pre-warmed (a label of the first-audio metric). */
    prewarmed(): boolean;
    /** When the agent now carrying the call acknowledged its Settings, on `clock`; null if none. */
    settingsAppliedAtMs(): number | null;
  };
}

type AgentStartedSpeaking = Extract<AgentServerMessage, { type: 'AgentStartedSpeaking' }>;

export class LatencyObserver {
  readonly #opts: LatencyObserverOptions;
  /** A person's wait for the agent's first audio, measured once. */
  #humanWaitPending = true;
  /** The agent's first audio after its SettingsApplied, measured once. */
  #agentFirstAudioPending = true;
  /** When the caller last stopped speaking, until the agent's answer starts to play. */
  #callerSpeechEndedAt: number | null = null;

  constructor(opts: LatencyObserverOptions) {
    this.#opts = opts;
  }

  /** The silence monitor dates the end of the caller's speech to the last voiced frame. */
  callerSpeechEnded(atMs: number): void {
    this.#callerSpeechEndedAt = atMs;
  }

  /** Agent audio started reaching the caller (a message went out toward the carrier). */
  audioSent(): void {
    const { metrics, log, clock, view } = this.#opts;
    const now = clock.now();
    if (this.#humanWaitPending && view.personAnswered()) {
      this.#humanWaitPending = false;
      metrics.amdHumanWait.observe({ carrier: this.#opts.carrier }, (now - this.#opts.answeredAtMs) / 1000);
    }
    const firstAudioMs = log.firstAudio();
    if (firstAudioMs !== null) {
      metrics.firstAudio.observe({ prewarmed: String(view.prewarmed()) }, firstAudioMs / 1000);
    }
    if (this.#agentFirstAudioPending) {
      const appliedAtMs = view.settingsAppliedAtMs();
      if (appliedAtMs !== null) {
        this.#agentFirstAudioPending = false;
        metrics.agentFirstAudio.observe((now - appliedAtMs) / 1000);
      }
    }
    if (this.#callerSpeechEndedAt !== null) {
      const waitedMs = now - this.#callerSpeechEndedAt;
      this.#callerSpeechEndedAt = null;
      log.perceived(waitedMs);
      metrics.perceivedLatency.observe(waitedMs / 1000);
    }
  }

  /** The latencies the agent reports with `AgentStartedSpeaking` (seconds; junk ignored). */
  agentStarted(message: AgentStartedSpeaking): void {
    const { agentReportedLatency } = this.#opts.metrics;
    for (const [kind, value] of [
      ['total', message.total_latency],
      ['tts', message.tts_latency],
      ['ttt', message.ttt_latency],
    ] as const) {
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
        agentReportedLatency.observe({ kind }, value);
      }
    }
    if (typeof message.total_latency === 'number' && Number.isFinite(message.total_latency)) {
      this.#opts.log.agentReported(message.total_latency * 1000);
    }
  }
}
