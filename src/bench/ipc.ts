// Messages between the bench orchestrator and the processes it forks (Node IPC channel). Times are
// absolute, on the clock all bench processes share (frames.ts `wallNowMs`).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ownClockMs } from './frames.js';
import type { LatencySummary } from './samples.js';

/** One run's timeline, the same for every process. */
export interface Plan {
  calls: number;
  /** Call i starts at `startAtMs + i × rampMs / calls`. */
  startAtMs: number;
  rampMs: number;
  /** Latency samples and server CPU count only between these: every call is up. */
  windowStartMs: number;
  windowEndMs: number;
  /** The agent sends no audio after this, so everything it sent is delivered before the hang-up. */
  quietAtMs: number;
  /** The carrier sends `stop` on every call. */
  stopAtMs: number;
}

export type ToChild =
  | { type: 'clock' }
  /** Event-loop delay since the previous `loop` request (the first one starts the count). */
  | { type: 'loop' }
  /** `clockOffsetMs`: how far the child's clock runs ahead of the orchestrator's. */
  | { type: 'plan'; plan: Plan; clockOffsetMs: number }
  /** `carrier`: the simulated carrier's dialect (src/sim/carrier/dialects/index.ts) the calls speak. */
  | { type: 'run'; serverUrl: string; carrier: string; plan: Plan; clockOffsetMs: number }
  | { type: 'report' };

export type FromChild =
  | { type: 'ready'; port: number }
  | { type: 'clock'; wallMs: number }
  | { type: 'loop'; p99Ms: number; maxMs: number }
  | { type: 'report'; report: AgentReport | CarrierReport }
  | { type: 'error'; message: string };

export interface AgentCallReport {
  call: number;
  /** Uplink bytes received intact, unique, by sequence position (StreamVerifier tally). */
  upInOrderBytes: number;
  upReorderedBytes: number;
  upDuplicateBytes: number;
  upCorruptBytes: number;
  upPendingBytes: number;
  downSentBytes: number;
  /** When each `UserStartedSpeaking` was sent. */
  bargeInsAtMs: number[];
  replies: number;
  connections: number;
}

export interface AgentReport {
  kind: 'agent';
  calls: AgentCallReport[];
  connections: number;
  /** Connections that never received a frame of audio (an unused pre-warmed session, say). */
  connectionsWithoutAudio: number;
  /** Bytes on connections that never yielded an intact frame, so no call to charge them to. */
  unattributedBytes: number;
  uplinkLatencyMs: LatencySummary;
  messageTypes: Record<string, number>;
}

export interface CarrierCallReport {
  call: number;
  /** Null when the call ran to its planned end. */
  failure: string | null;
  upSentBytes: number;
  downInOrderBytes: number;
  downReorderedBytes: number;
  downDuplicateBytes: number;
  downCorruptBytes: number;
  downPendingBytes: number;
  /** When each `clear` arrived. */
  clearsAtMs: number[];
  marksEchoed: number;
}

export interface CarrierReport {
  kind: 'carrier';
  calls: CarrierCallReport[];
  downlinkLatencyMs: LatencySummary;
  /** Voice webhook sent → `start` sent on the media stream. */
  setupMs: LatencySummary;
  /** Calls whose stream started only after the measurement window opened. */
  lateStarts: number;
}

/** Interval of the event-loop probe: prom-client's default, so callbridge's own gauge compares. */
export const LOOP_PROBE_MS = 10;

/** A probe interval as the histogram records it (ns, the interval included) → the delay beyond it, ms. */
export function loopDelayMs(intervalNs: number): number {
  return Math.max(0, intervalNs / 1e6 - LOOP_PROBE_MS);
}

/**
 * For children: answers `clock` and `loop` itself and hands every other message of the
 * orchestrator to `handler`.
 */
export function onParentMessage(handler: (message: ToChild) => void): void {
  const loop = monitorEventLoopDelay({ resolution: LOOP_PROBE_MS });
  loop.enable();
  process.on('message', (raw) => {
    const message = raw as ToChild;
    if (message.type === 'clock') {
      toParent({ type: 'clock', wallMs: ownClockMs() });
    } else if (message.type === 'loop') {
      toParent({ type: 'loop', p99Ms: loopDelayMs(loop.percentile(99)), maxMs: loopDelayMs(loop.max) });
      loop.reset();
    } else {
      handler(message);
    }
  });
  // The orchestrator is gone (ended or killed): nothing is left to report to.
  process.on('disconnect', () => process.exit(1));
  // An orderly exit on SIGTERM, so that exit hooks run (a `--cpu-prof` profile is written at exit).
  process.on('SIGTERM', () => process.exit(0));
}

export function toParent(message: FromChild): void {
  process.send?.(message);
}
