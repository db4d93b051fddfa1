// What `GET /` shows about the gateway (docs/protocols/webhook-providers.md section 9): the endpoint pattern, the providers served
// and, per provider, when a verified delivery last succeeded. A provider counts as migrated to its
// stable URL only after one has (docs/protocols/webhook-providers.md section 1); the times live in the store, so they
// survive restarts and are shared by instances.
import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import { describeError } from './forward.js';

export const WEBHOOK_ENDPOINT = '/webhooks/:provider';

/** Writes per provider at most this often per instance: the time matters to the minute, not the ms. */
const MARK_INTERVAL_MS = 60_000;

export interface WebhooksInfo {
  endpoint: typeof WEBHOOK_ENDPOINT;
  providers: string[];
  /** ISO time of the last verified delivery, null while none has succeeded. */
  lastVerifiedAt: Record<string, string | null>;
}

export class ProviderStatus {
  readonly #store: Store;
  readonly #providers: () => string[];
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #markedAt = new Map<string, number>();

  constructor(deps: { store: Store; providers: () => string[]; now: () => number; logger: Logger }) {
    this.#store = deps.store;
    this.#providers = deps.providers;
    this.#now = deps.now;
    this.#logger = deps.logger;
  }

  /** Records a succeeded verified delivery. Never throws: the delivery itself went through. */
  async markVerified(provider: string): Promise<void> {
    const now = this.#now();
    const last = this.#markedAt.get(provider);
    if (last !== undefined && now - last < MARK_INTERVAL_MS) return;
    this.#markedAt.set(provider, now);
    try {
      await this.#store.markProviderVerified(provider, now);
    } catch (err) {
      this.#markedAt.delete(provider);
      this.#logger.warn(
        { provider, reason: describeError(err) },
        'could not record webhook verification time',
      );
    }
  }

  async info(): Promise<WebhooksInfo> {
    const providers = this.#providers();
    const times = await this.#store.providerVerifiedTimes();
    const lastVerifiedAt: Record<string, string | null> = {};
    for (const name of providers) {
      const ms = times[name];
      lastVerifiedAt[name] = ms === undefined ? null : new Date(ms).toISOString();
    }
    return { endpoint: WEBHOOK_ENDPOINT, providers, lastVerifiedAt };
  }
}
