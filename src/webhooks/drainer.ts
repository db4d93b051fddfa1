// Drains the shared queue (docs/protocols/webhook-providers.md section 6: drained later and delivered under the same event
// name): claims one due event at a time, runs the provider's notification function, acks on
// success; on failure retries with exponential backoff, and after the last attempt moves the event
// to the dead letters (listed and retried through the admin API). Every instance may run one; the
// store hands each event to one of them.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import { backoffDelayMs, retryableOf } from '../retry.js';
import type { ClaimedEvent, Store } from '../store/store.js';
import { describeError, forwardEvent } from './forward.js';
import type { NormalizedEvent, NotificationFunction } from './provider.js';

/** Pause after the store failed, so an outage is not met with a retry (and a log line) per poll. */
const STORE_ERROR_PAUSE_MS = 5_000;

export interface DrainerOptions {
  maxAttempts: number;
  /** Delay before the second attempt; doubled for each further one. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How long a claimed event stays ours before another instance may take it over. */
  leaseMs: number;
  /** Sleep between polls while the queue is empty. */
  pollIntervalMs: number;
  /** How often the queue gauges are refreshed. */
  gaugeIntervalMs: number;
}

export interface DrainerDeps {
  store: Store;
  metrics: Metrics;
  logger: Logger;
  notifierFor(provider: string): NotificationFunction | undefined;
  options: DrainerOptions;
  now: () => number;
}

/** The queued event as the notification function sees it: same name, key and payload. */
export function eventFromQueue(queued: ClaimedEvent): NormalizedEvent {
  return {
    name: queued.name,
    provider: queued.provider,
    event: queued.name.slice(queued.provider.length + 1),
    idempotencyKey: queued.idempotencyKey,
    receivedAt: new Date(queued.enqueuedAtMs).toISOString(),
    payload: queued.payload,
  };
}

export class QueueDrainer {
  readonly #deps: DrainerDeps;
  readonly #consumer = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  #running = false;
  #loop: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #wake: (() => void) | null = null;
  /** Set by nudge() while a poll is under way, so the loop polls again instead of sleeping. */
  #nudged = false;
  #gaugesAt = 0;

  constructor(deps: DrainerDeps) {
    this.#deps = deps;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Ends the loop after the event in hand, if any. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wakeUp();
    await this.#loop;
    this.#loop = null;
  }

  /** Polls now instead of at the next interval (an event was just queued here). */
  nudge(): void {
    this.#nudged = true;
    this.#wakeUp();
  }

  /** Handles one due event; false when none was due. */
  async drainOnce(): Promise<boolean> {
    const { store, metrics, options } = this.#deps;
    const claimed = await store.claimNextEvent(this.#consumer, options.leaseMs);
    if (!claimed) return false;
    const log = this.#deps.logger.child({
      event: claimed.name,
      queueId: claimed.id,
      attempt: claimed.attempts,
    });

    const notify = this.#deps.notifierFor(claimed.provider);
    if (!notify) {
      await store.deadLetterEvent(claimed, `provider ${claimed.provider} is not registered`);
      metrics.webhookQueueDeliveries.inc({ provider: claimed.provider, outcome: 'dead_lettered' });
      log.error('queued event for an unknown provider moved to the dead letters');
      return true;
    }

    try {
      await forwardEvent(eventFromQueue(claimed), notify, metrics);
    } catch (err) {
      const reason = describeError(err);
      // A refusal that will not change by itself (a 4xx) is not tried again; an error that does not
      // say (a notification function's own) is, as a transient one.
      const permanent = retryableOf(err) === false;
      if (permanent || claimed.attempts >= options.maxAttempts) {
        await store.deadLetterEvent(claimed, reason);
        metrics.webhookQueueDeliveries.inc({ provider: claimed.provider, outcome: 'dead_lettered' });
        log.error(
          { reason },
          permanent
            ? 'queued webhook event refused for good: dead letter'
            : 'queued webhook event failed its last attempt: dead letter',
        );
      } else {
        const delayMs = backoffDelayMs(claimed.attempts, {
          firstDelayMs: options.baseDelayMs,
          maxDelayMs: options.maxDelayMs,
        });
        await store.retryEventLater(claimed, delayMs, reason);
        metrics.webhookQueueDeliveries.inc({ provider: claimed.provider, outcome: 'retried' });
        log.warn({ reason, delayMs }, 'queued webhook event failed; retrying later');
      }
      return true;
    }
    await store.ackEvent(claimed);
    metrics.webhookQueueDeliveries.inc({ provider: claimed.provider, outcome: 'delivered' });
    return true;
  }

  async refreshGauges(): Promise<void> {
    const { depth, oldestAgeMs, deadLetters } = await this.#deps.store.queueStats();
    const { metrics } = this.#deps;
    metrics.webhookQueueDepth.set(depth);
    metrics.webhookQueueOldestAge.set(oldestAgeMs === null ? 0 : oldestAgeMs / 1000);
    metrics.webhookDeadLetters.set(deadLetters);
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let worked = false;
      let failed = false;
      this.#nudged = false;
      try {
        worked = await this.drainOnce();
      } catch (err) {
        // The store itself failed (an event in hand stays leased and is retried after its lease).
        failed = true;
        this.#deps.logger.error({ reason: describeError(err) }, 'webhook queue drain failed');
      }
      await this.#maybeRefreshGauges();
      if (failed && this.#running)
        await this.#sleep(Math.max(STORE_ERROR_PAUSE_MS, this.#deps.options.pollIntervalMs));
      else if (!worked && this.#running && !this.#nudged)
        await this.#sleep(this.#deps.options.pollIntervalMs);
    }
  }

  async #maybeRefreshGauges(): Promise<void> {
    const now = this.#deps.now();
    if (now - this.#gaugesAt < this.#deps.options.gaugeIntervalMs) return;
    this.#gaugesAt = now;
    await this.refreshGauges().catch((err: unknown) => {
      this.#deps.logger.warn({ reason: describeError(err) }, 'could not read webhook queue stats');
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#timer = setTimeout(resolve, ms);
    });
  }

  #wakeUp(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
