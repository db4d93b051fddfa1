// The signed webhook gateway: requests, refusals, duplicates and its shared delivery queue.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { LATENCY_BUCKETS } from './buckets.js';

export function webhookMetrics(r: Registry[]) {
  return {
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
  };
}
