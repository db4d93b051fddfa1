// The call core's metrics: calls admitted, declined and ended, their pre-warm, latency a caller
// feels, functions, keypad entries and the admission limit.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './buckets.js';

export function callMetrics(r: Registry[]) {
  return {
    callsActive: new Gauge({
      name: 'callbridge_calls_active',
      help: 'Calls bridged right now.',
      labelNames: ['carrier'],
      registers: r,
    }),
    callsStarted: new Counter({
      name: 'callbridge_calls_started_total',
      help: 'Calls admitted to a media stream, counted as they start.',
      labelNames: ['carrier', 'direction'],
      registers: r,
    }),
    callsTotal: new Counter({
      name: 'callbridge_calls_total',
      help: 'Calls that ended, by how they ended.',
      labelNames: ['carrier', 'direction', 'reason'],
      registers: r,
    }),
    callDuration: new Histogram({
      name: 'callbridge_call_duration_seconds',
      help: 'Length of ended calls.',
      labelNames: ['carrier', 'direction'],
      buckets: [5, 15, 30, 60, 120, 300, 600, 1200, 3600],
      registers: r,
    }),
    streamsRejected: new Counter({
      name: 'callbridge_streams_rejected_total',
      help: 'Media streams refused before any agent was opened, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
    audioDropped: new Counter({
      name: 'callbridge_audio_frames_dropped_total',
      help: 'Audio frames dropped from a bounded buffer, by where.',
      labelNames: ['buffer'],
      registers: r,
    }),
    bargeIns: new Counter({
      name: 'callbridge_barge_ins_total',
      help: 'Times the caller interrupted the agent.',
      registers: r,
    }),
    firstAudio: new Histogram({
      name: 'callbridge_call_first_audio_seconds',
      help: "From the media stream's start to the first agent audio sent to the caller.",
      labelNames: ['prewarmed'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    perceivedLatency: new Histogram({
      name: 'callbridge_perceived_response_seconds',
      help: "From the end of the caller's speech to the first agent audio sent back: the wait a caller feels.",
      buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
      registers: r,
    }),
    prewarm: new Counter({
      name: 'callbridge_prewarm_sessions_total',
      help: 'Agent sessions dialed at the voice webhook, by what became of them.',
      labelNames: ['outcome'],
      registers: r,
    }),
    streamPrewarm: new Counter({
      name: 'callbridge_stream_prewarm_total',
      help:
        'Media streams by whether they met the agent pre-warmed for them: used (here), other_instance ' +
        '(prepared elsewhere, dialed afresh), none (nothing waited). Pre-warm hit rate: used / all.',
      labelNames: ['carrier', 'outcome'],
      registers: r,
    }),
    functionCalls: new Counter({
      name: 'callbridge_function_calls_total',
      help: 'Client-side function calls, by function (from the profile) and outcome.',
      labelNames: ['function', 'outcome'],
      registers: r,
    }),
    functionDuration: new Histogram({
      name: 'callbridge_function_duration_seconds',
      help: 'Time to answer a client-side function call, by function and outcome.',
      labelNames: ['function', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    dtmfEntries: new Counter({
      name: 'callbridge_dtmf_entries_total',
      help: 'Keypad entries passed to the agent.',
      registers: r,
    }),
    admissionLimit: new Gauge({
      name: 'callbridge_admission_limit',
      help: 'Calls this instance admits now: MAX_CALLS, lowered for a while after agent 429s.',
      registers: r,
    }),
    callsDeclined: new Counter({
      name: 'callbridge_calls_declined_total',
      help: 'Calls declined at the voice webhook or at their media stream, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
  };
}
