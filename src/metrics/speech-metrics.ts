// The speech service's REST side: post-call analyses and rendered prompts.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function speechMetrics(r: Registry[]) {
  return {
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
  };
}
