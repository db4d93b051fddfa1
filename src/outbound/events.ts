// Signed events to the operator gateway when a campaign completes or its breaker pauses it. The
// delivery function is the webhook gateway's notifier (app.ts passes it in): the same body, headers
// and signature as every other event the operator receives. A failed delivery is retried a few
// times with a growing delay (retry.ts), unless the endpoint refused it for good (a 4xx); the
// idempotency key lets the gateway drop a repeat.
import type { Logger } from 'pino';
import { retryInBackground } from '../retry.js';
import type { DialerClock } from './clock.js';
import type { CampaignProgress } from './progress.js';
import type { CampaignRecord } from '../store/campaign-records.js';

export type CampaignEventName = 'campaign.completed' | 'campaign.paused';

export interface CampaignEvent {
  name: CampaignEventName;
  campaign: CampaignRecord;
  progress: CampaignProgress;
  atMs: number;
}

/** The shape the operator gateway receives (the webhook gateway's normalized event). */
export interface GatewayEvent {
  name: string;
  provider: string;
  event: string;
  idempotencyKey: string;
  receivedAt: string;
  payload: unknown;
}

export type DeliverToGateway = (event: GatewayEvent) => Promise<void>;
export type CampaignNotifier = (event: CampaignEvent) => void;

const PROVIDER = 'campaigns';
const DELIVERY_ATTEMPTS = 5;
const DELIVERY_BACKOFF = { firstDelayMs: 2_000, maxDelayMs: 60_000 };

export function gatewayEvent(event: CampaignEvent): GatewayEvent {
  const { campaign, progress } = event;
  return {
    name: `${PROVIDER}/${event.name}`,
    provider: PROVIDER,
    event: event.name,
    // A campaign completes once; it may be paused by its breaker again after each resume.
    idempotencyKey:
      event.name === 'campaign.completed'
        ? `${PROVIDER}:${campaign.id}:completed`
        : `${PROVIDER}:${campaign.id}:paused:${campaign.pause?.atMs ?? event.atMs}`,
    receivedAt: new Date(event.atMs).toISOString(),
    payload: {
      campaignId: campaign.id,
      name: campaign.spec.name,
      state: campaign.state,
      pause: campaign.pause,
      contacts: progress.contacts,
      outcomes: progress.outcomes,
    },
  };
}

/** Delivers each event in the background, retrying a failed delivery; never throws to the dialer. */
export function campaignNotifier(
  deliver: DeliverToGateway,
  clock: DialerClock,
  logger: Logger,
): CampaignNotifier {
  return (event) => {
    const body = gatewayEvent(event);
    const log = logger.child({ event: body.name, campaignId: event.campaign.id });
    retryInBackground(() => deliver(body), {
      attempts: DELIVERY_ATTEMPTS,
      backoff: DELIVERY_BACKOFF,
      schedule: (run, delayMs) => clock.setTimeout(run, delayMs),
      done: (outcome) => {
        if (outcome.ok) log.info('campaign event delivered');
        else
          log.error(
            { err: (outcome.err as Error).message, attempts: outcome.tries },
            outcome.permanent
              ? 'campaign event refused by the gateway: not retried'
              : 'campaign event not delivered',
          );
      },
    });
  };
}
