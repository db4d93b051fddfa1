// Campaigns and outbound calls: dials, carrier errors, pace and concurrency, the breaker,
// answering-machine verdicts and carriers' final statuses.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ATTEMPT_OUTCOMES } from '../store/campaign-records.js';

/** Outcomes a campaign dial is counted under: each attempt's, and `dnc` for one the list stopped. */
const CAMPAIGN_DIAL_OUTCOMES = [...ATTEMPT_OUTCOMES, 'dnc'] as const;

// Campaign gauges describe state shared through the store, so every instance reports the same
// value: aggregate them with `max`, not `sum`. Counters count this instance's own work.
export function campaignMetrics(r: Registry[]) {
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
  };
}
