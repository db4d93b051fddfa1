// Every metric callbridge exports, on a registry created per app. Labels are bounded: carrier,
// direction, outcome, reason, provider, code, function name from the profile; never a call id.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ATTEMPT_OUTCOMES } from '../store/campaign-records.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10];

export function createMetrics(region: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ region });
  collectDefaultMetrics({ register: registry, prefix: 'callbridge_' });
  // prom-client adds nodejs_active_{handles,requests,resources}_total: gauges with a counter's
  // suffix, which `promtool check metrics` rejects. The same gauges without the suffix, by type,
  // hold the same counts (sum them).
  for (const kind of ['handles', 'requests', 'resources']) {
    registry.removeSingleMetric(`callbridge_nodejs_active_${kind}_total`);
  }

  const r = [registry];
  // Relayed audio is counted on every 20 ms frame of every call: plain additions here, moved into
  // the counters when they are read (a scrape), not a prom-client label lookup per frame.
  const audio = { upFrames: 0, upBytes: 0, downFrames: 0, downBytes: 0 };
  const flushAudio = () => {
    if (audio.upFrames > 0) audioFrames.inc({ direction: 'uplink' }, audio.upFrames);
    if (audio.downFrames > 0) audioFrames.inc({ direction: 'downlink' }, audio.downFrames);
    if (audio.upBytes > 0) audioBytes.inc({ direction: 'uplink' }, audio.upBytes);
    if (audio.downBytes > 0) audioBytes.inc({ direction: 'downlink' }, audio.downBytes);
    audio.upFrames = audio.upBytes = audio.downFrames = audio.downBytes = 0;
  };
  const audioFrames: Counter<'direction'> = new Counter({
    name: 'callbridge_audio_frames_total',
    help: 'Audio frames relayed, by direction (uplink: caller to agent).',
    labelNames: ['direction'],
    registers: r,
    collect: flushAudio,
  });
  const audioBytes: Counter<'direction'> = new Counter({
    name: 'callbridge_audio_bytes_total',
    help: 'Audio bytes relayed, by direction (uplink: caller to agent).',
    labelNames: ['direction'],
    registers: r,
    collect: flushAudio,
  });
  return {
    registry,
    audio,
    audioFrames,
    audioBytes,

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
    carrierRequestsRejected: new Counter({
      name: 'callbridge_carrier_requests_rejected_total',
      help: 'Carrier webhooks and media upgrades refused, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
    carrierFramesInvalid: new Counter({
      name: 'callbridge_carrier_frames_invalid_total',
      help: 'Carrier media frames that could not be read, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
    carrierApiRequests: new Counter({
      name: 'callbridge_carrier_api_requests_total',
      help: 'Requests to a carrier REST API, by carrier, operation and outcome (ok, failed).',
      labelNames: ['carrier', 'operation', 'outcome'],
      registers: r,
    }),
    carrierMediaReorder: new Counter({
      name: 'callbridge_carrier_media_reorder_total',
      help: 'Out-of-order carrier media frames, by carrier and outcome (reordered, late, duplicate, gap, resync).',
      labelNames: ['carrier', 'outcome'],
      registers: r,
    }),
    carrierStreamErrors: new Counter({
      name: 'callbridge_carrier_stream_errors_total',
      help: 'Error frames a carrier sent on a media stream.',
      labelNames: ['carrier'],
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

    // The console's Content-Security-Policy violations as browsers report them (admin/csp-reports.ts).
    cspViolations: new Counter({
      name: 'callbridge_csp_violations_total',
      help: "Content-Security-Policy violations the console's browsers reported, by directive.",
      labelNames: ['directive'],
      registers: r,
    }),
    webhookRequests: new Counter({
      name: 'callbridge_webhook_requests_total',
      help: 'Webhook gateway requests, by provider and outcome.',
      labelNames: ['provider', 'outcome'],
      registers: r,
    }),
    webhookAuthFailures: new Counter({
      name: 'callbridge_webhook_auth_failures_total',
      help: 'Webhook requests whose signature was missing, malformed, wrong or expired, by provider and reason.',
      labelNames: ['provider', 'reason'],
      registers: r,
    }),
    webhookRateLimited: new Counter({
      name: 'callbridge_webhook_rate_limited_total',
      help: 'Webhook requests refused because the caller IP had too many authentication failures.',
      labelNames: ['provider'],
      registers: r,
    }),
    webhookDuplicates: new Counter({
      name: 'callbridge_webhook_duplicates_total',
      help: 'Webhook deliveries whose idempotency key was already processed.',
      labelNames: ['provider'],
      registers: r,
    }),
    webhookQueueDepth: new Gauge({
      name: 'callbridge_webhook_queue_depth',
      help: 'Events on the shared webhook queue (waiting, delayed for a retry or in flight).',
      registers: r,
    }),
    webhookQueueOldestAge: new Gauge({
      name: 'callbridge_webhook_queue_oldest_age_seconds',
      help: 'Age of the oldest event on the shared webhook queue; 0 when empty.',
      registers: r,
    }),
    webhookDeadLetters: new Gauge({
      name: 'callbridge_webhook_dead_letters',
      help: 'Webhook events that exhausted their delivery attempts.',
      registers: r,
    }),
    webhookQueueDeliveries: new Counter({
      name: 'callbridge_webhook_queue_deliveries_total',
      help: 'Queued webhook events handled by the drainer, by provider and outcome (delivered, retried, dead_lettered).',
      labelNames: ['provider', 'outcome'],
      registers: r,
    }),
    webhookForwardDuration: new Histogram({
      name: 'callbridge_webhook_forward_duration_seconds',
      help: 'Time spent in a notification function, by provider and outcome (ok, failed).',
      labelNames: ['provider', 'outcome'],
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
    analyses: new Counter({
      name: 'callbridge_analyses_total',
      help: 'Post-call analyses finished, by outcome (ok, skipped, failed).',
      labelNames: ['outcome'],
      registers: r,
    }),
    analysisDuration: new Histogram({
      name: 'callbridge_analysis_duration_seconds',
      help: 'Time of each analysis request to the speech service, by outcome (ok, retried, failed).',
      labelNames: ['outcome'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: r,
    }),
    analysisQueueDepth: new Gauge({
      name: 'callbridge_analysis_queue_depth',
      help: 'Analyses waiting, delayed for a retry or in progress on the shared queue.',
      registers: r,
    }),
    promptRenders: new Counter({
      name: 'callbridge_prompt_renders_total',
      help: 'Fixed prompts asked for, by kind and where the audio came from (cache, rendered, bundled).',
      labelNames: ['kind', 'source'],
      registers: r,
    }),
    ...campaignMetrics(r),
  };
}

/** Outcomes a campaign dial is counted under: each attempt's, and `dnc` for one the list stopped. */
const CAMPAIGN_DIAL_OUTCOMES = [...ATTEMPT_OUTCOMES, 'dnc'] as const;

// Campaign gauges describe state shared through the store, so every instance reports the same
// value: aggregate them with `max`, not `sum`. Counters count this instance's own work.
function campaignMetrics(r: Registry[]) {
  const dials = new Counter({
    name: 'callbridge_campaign_dials_total',
    help: 'Campaign dials by how they ended: the attempt outcomes, and dnc for a dial the do-not-call list stopped.',
    labelNames: ['outcome'],
    registers: r,
  });
  for (const outcome of CAMPAIGN_DIAL_OUTCOMES) dials.inc({ outcome }, 0);
  const carrierErrors = new Counter({
    name: 'callbridge_campaign_carrier_errors_total',
    help: 'Carrier API errors placing campaign calls, by kind (retry_later, failed, unknown).',
    labelNames: ['kind'],
    registers: r,
  });
  for (const kind of ['retry_later', 'failed', 'unknown']) carrierErrors.inc({ kind }, 0);
  return {
    campaignDials: dials,
    campaignCarrierErrors: carrierErrors,
    campaignDialsStarted: new Counter({
      name: 'callbridge_campaign_dials_started_total',
      help: 'Campaign calls the carrier accepted to place.',
      registers: r,
    }),
    campaignBreakerTrips: new Counter({
      name: 'callbridge_campaign_breaker_trips_total',
      help: 'Campaigns paused by their circuit breaker.',
      registers: r,
    }),
    campaignCallsActive: new Gauge({
      name: 'callbridge_campaign_calls_active',
      help: 'Campaign calls in flight, across every instance sharing the store.',
      registers: r,
    }),
    campaignConcurrencyLimit: new Gauge({
      name: 'callbridge_campaign_concurrency_limit',
      help: 'Sum of the concurrency caps of running campaigns, as lowered after agent 429s.',
      registers: r,
    }),
    campaignPaceTarget: new Gauge({
      name: 'callbridge_campaign_pace_target_calls_per_second',
      help: 'Sum of the paces set for running campaigns, in calls per second.',
      registers: r,
    }),
    campaigns: new Gauge({
      name: 'callbridge_campaigns',
      help: 'Campaigns running or paused, by state.',
      labelNames: ['state'],
      registers: r,
    }),
    campaignsPausedByBreaker: new Gauge({
      name: 'callbridge_campaigns_paused_by_breaker',
      help: 'Campaigns paused by their circuit breaker and not resumed yet.',
      registers: r,
    }),
    amdVerdicts: new Counter({
      name: 'callbridge_amd_verdicts_total',
      help: 'Answering-machine detection verdicts on outbound calls, by carrier and verdict.',
      labelNames: ['carrier', 'verdict'],
      registers: r,
    }),
    amdDetection: new Histogram({
      name: 'callbridge_amd_detection_seconds',
      help: 'From the answer to the answering-machine verdict, by carrier and verdict (machine verdicts come at the end of the greeting).',
      labelNames: ['carrier', 'verdict'],
      buckets: [0.5, 1, 2, 3, 4, 6, 8, 12, 20, 30, 45],
      registers: r,
    }),
    amdHumanWait: new Histogram({
      name: 'callbridge_amd_human_wait_seconds',
      help: 'On outbound calls answered by a person: from the answer to the first agent audio sent, detection included.',
      labelNames: ['carrier'],
      buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 15, 30],
      registers: r,
    }),
    outboundCallStatuses: new Counter({
      name: 'callbridge_outbound_call_statuses_total',
      help: 'Final statuses carriers reported for outbound calls, by carrier and status.',
      labelNames: ['carrier', 'status'],
      registers: r,
    }),
    // Call recordings (docs/recordings.md): `store` is file or s3, `outcome` ready, failed or deleted.
    recordings: new Counter({
      name: 'callbridge_recordings_total',
      help: 'Call recordings finished, by store and outcome (ready: stored whole; failed: given up; deleted: deleted during the call).',
      labelNames: ['store', 'outcome'],
      registers: r,
    }),
    recordingBytes: new Counter({
      name: 'callbridge_recording_bytes_total',
      help: 'Bytes of call recordings written to the store, by store.',
      labelNames: ['store'],
      registers: r,
    }),
    recordingUpload: new Histogram({
      name: 'callbridge_recording_upload_seconds',
      help: "From a call's end to its recording complete in the store (the last writes and, for s3, the multipart completion).",
      labelNames: ['store'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: r,
    }),
    recordingFailures: new Counter({
      name: 'callbridge_recording_failures_total',
      help: 'Recording failures, by store and stage (begin, write, abandoned: no consent played, complete, retention).',
      labelNames: ['store', 'stage'],
      registers: r,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
