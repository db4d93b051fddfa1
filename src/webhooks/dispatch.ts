// After verification and normalization: deduplicate on the idempotency key, then put the event on
// the shared queue or forward it directly (docs/protocols/webhook-providers.md sections 5 and 6).
//
// The key is claimed as in progress first (atomically, in the shared store), so two concurrent
// deliveries of one event never both forward; it is committed only once the event was forwarded or
// queued, and released on failure so the provider's retry is processed.
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { describeError, forwardEvent } from './forward.js';
import type { NormalizedEvent, NotificationFunction, WebhookProvider } from './provider.js';

export type DispatchOutcome =
  | 'forwarded'
  | 'queued'
  | 'duplicate'
  /** The same key is being processed by another request right now. */
  | 'in_progress'
  | 'forward_failed'
  /** The store could not be reached: nothing was forwarded. */
  | 'unavailable';

export interface DispatcherDeps {
  store: Store;
  metrics: Metrics;
  logger: Logger;
  queuePilots: readonly string[];
  notifierFor(provider: string): NotificationFunction;
  /** Called after an event was queued (wakes the local drainer). */
  onQueued(): void;
  /** How long a processed key is remembered. */
  dedupeWindowMs: number;
  /** How long an unfinished claim blocks the key; longer than a forward can take. */
  inProgressTtlMs: number;
}

/** docs/protocols/webhook-providers.md section 6: queued only when the provider is a pilot and the event is queue-enabled. */
export function isQueued(provider: WebhookProvider, event: string, queuePilots: readonly string[]): boolean {
  return queuePilots.includes(provider.name) && provider.queueEvents.includes(event);
}

export type Dispatch = (provider: WebhookProvider, event: NormalizedEvent) => Promise<DispatchOutcome>;

export function createDispatcher(deps: DispatcherDeps): Dispatch {
  const { store, metrics } = deps;

  return async (provider, event) => {
    // Made only when something goes wrong: a child logger per delivery costs at high rates.
    const log = () =>
      deps.logger.child({
        provider: provider.name,
        event: event.name,
        idempotencyKey: event.idempotencyKey,
      });
    const key = event.idempotencyKey;

    let claim: Awaited<ReturnType<Store['claimIdempotencyKey']>>;
    try {
      claim = await store.claimIdempotencyKey(key, deps.inProgressTtlMs);
    } catch (err) {
      log().error({ reason: describeError(err) }, 'webhook store unavailable');
      return 'unavailable';
    }
    if (claim.status === 'done') {
      metrics.webhookDuplicates.inc({ provider: provider.name });
      return 'duplicate';
    }
    if (claim.status === 'in_progress') return 'in_progress';

    const queued = isQueued(provider, event.event, deps.queuePilots);
    try {
      if (queued) {
        await store.enqueueEvent({
          name: event.name,
          provider: event.provider,
          idempotencyKey: key,
          payload: event.payload,
        });
      } else {
        await forwardEvent(event, deps.notifierFor(provider.name), metrics);
      }
    } catch (err) {
      await store.releaseIdempotencyKey(key, claim.token).catch((releaseErr: unknown) => {
        // The claim lapses on its own after inProgressTtlMs; the provider's retry gets through then.
        log().error({ reason: describeError(releaseErr) }, 'could not release idempotency key');
      });
      log().warn(
        { reason: describeError(err) },
        queued ? 'could not queue webhook event' : 'webhook forward failed',
      );
      return queued ? 'unavailable' : 'forward_failed';
    }

    try {
      await store.commitIdempotencyKey(key, claim.token, deps.dedupeWindowMs);
    } catch (err) {
      // The event went on. Until the claim lapses a repeat answers in_progress; after, it may pass once more.
      log().error({ reason: describeError(err) }, 'could not commit idempotency key');
    }
    if (queued) deps.onQueued();
    return queued ? 'queued' : 'forwarded';
  };
}
