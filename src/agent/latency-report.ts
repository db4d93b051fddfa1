// `LatencyReport` (docs/protocols/agent.md): the agent's own breakdown of one turn's delay, in
// seconds. Read tolerantly (a missing or odd figure is skipped, never fatal) and turned into metric
// observations by kind, bounded to the five below.
import type { Metrics } from '../metrics/metrics.js';

export type TurnLatencyKind = 'stt' | 'thinking' | 'thinking_text' | 'tts' | 'total';

/** Report field → metric kind. `thinking` is the wait for the first token, what a caller feels. */
const FIELDS: ReadonlyArray<readonly [string, TurnLatencyKind]> = Object.freeze([
  ['stt_latency', 'stt'],
  ['ttt_token_latency', 'thinking'],
  ['ttt_text_latency', 'thinking_text'],
  ['tts_latency', 'tts'],
  ['total_latency', 'total'],
] as const);

/** Figures past this are not a turn's delay but a broken report; they are left out. */
const MAX_PLAUSIBLE_SECONDS = 600;

export interface LatencyObservation {
  kind: TurnLatencyKind;
  seconds: number;
}

export function readLatencyReport(message: Record<string, unknown>): LatencyObservation[] {
  const observations: LatencyObservation[] = [];
  for (const [field, kind] of FIELDS) {
    const value = message[field];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= MAX_PLAUSIBLE_SECONDS) {
      observations.push({ kind, seconds: value });
    }
  }
  return observations;
}

/** Records one report in `agent_turn_latency_seconds`; returns what it recorded. */
export function observeLatencyReport(
  metrics: Pick<Metrics, 'agentTurnLatency'>,
  message: Record<string, unknown>,
): LatencyObservation[] {
  const observations = readLatencyReport(message);
  for (const { kind, seconds } of observations) metrics.agentTurnLatency.observe({ kind }, seconds);
  return observations;
}
