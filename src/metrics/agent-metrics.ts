// The voice agent link: connects, messages, errors, reconnects and the agent's own latency figures.
import { Counter, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './buckets.js';

export function agentMetrics(r: Registry[]) {
  return {
    agentConnectDuration: new Histogram({
      name: 'callbridge_agent_connect_duration_seconds',
      help: 'From dialing the agent to SettingsApplied (outcome ready) or to a failed attempt (outcome failed).',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    agentMessages: new Counter({
      name: 'callbridge_agent_messages_total',
      help: 'Agent control messages received, by type (unknown types as "unknown").',
      labelNames: ['type'],
      registers: r,
    }),
    agentErrors: new Counter({
      name: 'callbridge_agent_errors_total',
      help: 'Agent Error and Warning messages and failed connects, by kind and code.',
      labelNames: ['kind', 'code'],
      registers: r,
    }),
    agentReconnects: new Counter({
      name: 'callbridge_agent_reconnects_total',
      help: 'Agent sessions re-established mid-call, by outcome.',
      labelNames: ['outcome'],
      registers: r,
    }),
    agentMessagesDropped: new Counter({
      name: 'callbridge_agent_messages_dropped_total',
      help: 'Control messages for the agent dropped from the bounded queue that waits for it.',
      registers: r,
    }),
    agentRefused: new Counter({
      name: 'callbridge_agent_refused_total',
      help: 'Agent handshakes refused with HTTP 429 (too many concurrent sessions).',
      registers: r,
    }),
    agentReportedLatency: new Histogram({
      name: 'callbridge_agent_reported_latency_seconds',
      help: "The agent's own latency figures from AgentStartedSpeaking, by kind (total, tts, ttt).",
      labelNames: ['kind'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    agentFirstAudio: new Histogram({
      name: 'callbridge_agent_first_audio_seconds',
      help: 'From SettingsApplied to the first agent audio of the call.',
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
    agentUpdates: new Counter({
      name: 'callbridge_agent_updates_total',
      help: "Mid-call agent updates asked for by a profile's function, by type and outcome (applied, timeout, closed).",
      labelNames: ['type', 'outcome'],
      registers: r,
    }),
    agentSettingsTimeouts: new Counter({
      name: 'callbridge_agent_settings_timeouts_total',
      help: 'Agent sessions closed because SettingsApplied did not come in time (the call gets its fallback).',
      registers: r,
    }),
    agentTurnLatency: new Histogram({
      name: 'callbridge_agent_turn_latency_seconds',
      help: "The agent's per-turn delay breakdown from LatencyReport, by kind (stt, thinking, thinking_text, tts, total).",
      labelNames: ['kind'],
      buckets: LATENCY_BUCKETS,
      registers: r,
    }),
  };
}
