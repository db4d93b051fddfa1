// Every metric callbridge exports, on a registry created per app, one file per family beside this one.
// Labels are bounded: carrier, direction, outcome, reason, provider, code, function name from the
// profile; never a call id.
import { Counter, collectDefaultMetrics, Registry } from 'prom-client';
import { agentMetrics } from './agent-metrics.js';
import { callMetrics } from './call-metrics.js';
import { campaignMetrics } from './campaign-metrics.js';
import { carrierMetrics } from './carrier-metrics.js';
import { consoleMetrics } from './console-metrics.js';
import { recordingMetrics } from './recording-metrics.js';
import { speechMetrics } from './speech-metrics.js';
import { webhookMetrics } from './webhook-metrics.js';

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
    ...callMetrics(r),
    ...carrierMetrics(r),
    ...agentMetrics(r),
    ...webhookMetrics(r),
    ...speechMetrics(r),
    ...campaignMetrics(r),
    ...recordingMetrics(r),
    ...consoleMetrics(r),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
