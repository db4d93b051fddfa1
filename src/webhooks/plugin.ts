// The webhook gateway (docs/protocols/webhook-providers.md): built once per app from config and the
// store, it hands the app a Fastify plugin serving `POST /webhooks/:provider`, the data `GET /`
// shows, a secret reload for SIGHUP, and the queue drainer. `webhooksRoom`, this file's default
// export, puts it on the app as `app.gateway`, with `app.operatorGateway` for the other rooms' events.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { createDispatcher } from './dispatch.js';
import { type DrainerOptions, QueueDrainer } from './drainer.js';
import { webhookIngress } from './ingress.js';
import { operatorGatewayNotifier } from './notifier.js';
import type { NotificationFunction, WebhookProvider } from './provider.js';
import { ProviderStatus, type WebhooksInfo } from './provider-status.js';
import { PROVIDERS, secretNamesOf } from './providers/registry.js';
import { WebhookSecrets } from './secrets.js';

export type { WebhookAdminDeps } from './admin-routes.js';
export { registerWebhookAdminRoutes } from './admin-routes.js';
export type { WebhooksInfo } from './provider-status.js';

export interface WebhookGatewayOptions {
  now: () => number;
  /** Timeout of one notification (operator gateway POST). */
  forwardTimeoutMs: number;
  /** How long a processed idempotency key is remembered (providers retry for up to 3 days). */
  dedupeWindowMs: number;
  queue: DrainerOptions;
  providers: readonly WebhookProvider[];
}

export const DEFAULT_GATEWAY_OPTIONS: WebhookGatewayOptions = {
  now: Date.now,
  forwardTimeoutMs: 10_000,
  dedupeWindowMs: 7 * 24 * 3_600_000,
  queue: {
    // 1 s, 2 s, 4 s … capped at 10 min: about 27 minutes from the first failure to the dead letter.
    maxAttempts: 12,
    baseDelayMs: 1_000,
    maxDelayMs: 10 * 60_000,
    leaseMs: 30_000,
    pollIntervalMs: 500,
    gaugeIntervalMs: 5_000,
  },
  providers: PROVIDERS,
};

export interface WebhookGatewayDeps {
  config: Config;
  store: Store;
  metrics: Metrics;
  logger: Logger;
  /** Defaults above; tests shorten the queue's delays or move the clock. */
  options?: Partial<Omit<WebhookGatewayOptions, 'queue'>> & { queue?: Partial<DrainerOptions> };
}

export interface WebhookGateway {
  /** Register on the app (not wrapped in fastify-plugin: its raw-body parser stays in its scope). */
  plugin: FastifyPluginAsync;
  /** For `GET /`'s `webhooks` field. */
  info(): Promise<WebhooksInfo>;
  /** Re-reads the secrets file (SIGHUP). Never rejects; a bad file is logged and the old secrets stay. */
  reload(): Promise<void>;
  /** Starts draining the shared queue on this instance; idempotent. */
  startDrainer(): void;
  /** Stops the drainer after the event in hand. Also runs when the app closes. The store stays open. */
  close(): Promise<void>;
}

/** Throws ConfigError when the secrets file is unreadable or invalid. */
export function webhookGateway(deps: WebhookGatewayDeps): WebhookGateway {
  const options: WebhookGatewayOptions = {
    ...DEFAULT_GATEWAY_OPTIONS,
    ...deps.options,
    queue: { ...DEFAULT_GATEWAY_OPTIONS.queue, ...deps.options?.queue },
  };
  const { config, store, metrics } = deps;
  const logger = deps.logger.child({ component: 'webhooks' });
  const { providers, now } = options;

  const secrets = new WebhookSecrets({
    fromEnv: config.webhooks.secrets,
    file: config.webhooks.secretsFile,
    knownNames: secretNamesOf(providers),
    logger,
  });

  const served = () =>
    providers.filter(
      (provider) => !provider.onlyWithSecret || provider.secretNames.some((name) => secrets.has(name)),
    );
  const resolveProvider = (name: string) => served().find((provider) => provider.name === name);

  const gatewaySecret = config.webhooks.operatorGatewaySecret ?? null;
  if (config.webhooks.operatorGatewayUrl && !gatewaySecret) {
    logger.warn('OPERATOR_GATEWAY_SECRET is not set: events are forwarded to the operator gateway unsigned');
  }
  const notifiers = new Map<string, NotificationFunction>(
    providers.map((provider) => [
      provider.name,
      provider.notify ??
        operatorGatewayNotifier(provider.name, {
          url: config.webhooks.operatorGatewayUrl,
          secret: gatewaySecret,
          timeoutMs: options.forwardTimeoutMs,
          logger,
          now,
        }),
    ]),
  );

  const drainer = new QueueDrainer({
    store,
    metrics,
    logger,
    notifierFor: (provider) => notifiers.get(provider),
    options: options.queue,
    now,
  });

  const dispatch = createDispatcher({
    store,
    metrics,
    logger,
    queuePilots: config.webhooks.queuePilots,
    notifierFor: (provider) => {
      const notify = notifiers.get(provider);
      if (!notify) throw new Error(`no notification function for ${provider}`);
      return notify;
    },
    onQueued: () => drainer.nudge(),
    dedupeWindowMs: options.dedupeWindowMs,
    inProgressTtlMs: options.forwardTimeoutMs + 30_000,
  });

  const status = new ProviderStatus({ store, providers: () => served().map((p) => p.name), now, logger });

  const ingress = webhookIngress({
    bodyLimitBytes: config.webhooks.bodyLimitBytes,
    resolveProvider,
    secrets,
    limiter: new AuthFailureLimiter(store, now),
    dispatch,
    status,
    metrics,
    logger,
    now,
  });

  return {
    plugin: async (scope, opts) => {
      scope.addHook('onClose', async () => drainer.stop());
      await ingress(scope, opts);
    },
    info: () => status.info(),
    reload: () => secrets.reload(),
    startDrainer: () => drainer.start(),
    close: () => drainer.stop(),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: WebhookGateway;
    /**
     * Delivers another room's events (campaigns, calls) to the operator gateway as the webhook
     * gateway delivers its own: same body, headers and signature. One notifier per provider name.
     */
    operatorGateway: (provider: string) => NotificationFunction;
  }
}

/** Timeout of one delivery of another room's event to the operator gateway. */
const EVENT_DELIVERY_TIMEOUT_MS = 10_000;

async function webhooksRoom(app: FastifyInstance, opts: { logger: Logger }): Promise<void> {
  const { config, store, metrics } = app;
  // Throws on an unreadable secrets file: before any other room has started anything.
  const gateway = webhookGateway({ config, store, metrics, logger: opts.logger });
  app.decorate('gateway', gateway);
  app.decorate('operatorGateway', (provider: string) =>
    operatorGatewayNotifier(provider, {
      url: config.webhooks.operatorGatewayUrl,
      secret: config.webhooks.operatorGatewaySecret ?? null,
      timeoutMs: EVENT_DELIVERY_TIMEOUT_MS,
      logger: opts.logger,
      now: Date.now,
    }),
  );
  await app.register(gateway.plugin);
  app.addHook('onClose', () => gateway.close());
}

export default fp(webhooksRoom, {
  name: 'callbridge-webhooks',
  decorators: { fastify: ['config', 'store'] },
  dependencies: ['callbridge-metrics'],
});
