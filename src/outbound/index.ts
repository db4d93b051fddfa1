// The outbound room's door: its plugin (plugin.ts) builds the campaign service and, when an
// originator can place calls, the dialer, from the configuration and the store.
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { type DialerClock, systemClock } from './clock.js';
import { Dialer, type DialerOptions } from './dialer.js';
import { campaignNotifier, type DeliverToGateway } from './events.js';
import type { Originator } from './ports.js';
import { CampaignService } from './service.js';
import type { DialPolicy } from '../trust/dial-policy.js';
import type { FetchPolicy } from '../trust/fetch-policy.js';

export type { Originator } from './ports.js';
export { Dialer } from './dialer.js';
export { renderTemplate } from './template.js';

export interface OutboundDeps {
  config: Config;
  store: Store;
  metrics: Metrics;
  logger: Logger;
  /** null: no carrier can place calls here; campaigns can be prepared but not started. */
  originator: Originator | null;
  /** Carriers a campaign may name. */
  carriers: readonly string[];
  /** Carriers among them with no answering-machine detection. */
  carriersWithoutMachineDetection?: readonly string[];
  /** Delivers campaign events to the operator gateway (the webhook gateway's notifier). */
  deliver: DeliverToGateway;
  instanceId: string;
  clock?: DialerClock;
  dialerOptions?: Partial<DialerOptions>;
  /** The policy contacts and caller IDs are checked against. */
  dialPolicy: DialPolicy;
  /** The policy a campaign's voicemail recording URL is checked against. */
  fetchPolicy: FetchPolicy;
}

export interface Outbound {
  service: CampaignService;
  dialer: Dialer | null;
}

export function createOutbound(deps: OutboundDeps): Outbound {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger.child({ component: 'campaigns' });
  const dialer =
    deps.originator === null
      ? null
      : new Dialer({
          store: deps.store,
          originator: deps.originator,
          metrics: deps.metrics,
          logger,
          notify: campaignNotifier(deps.deliver, clock, logger),
          clock,
          instanceId: deps.instanceId,
          ...(deps.dialerOptions ? { options: deps.dialerOptions } : {}),
        });
  const service = new CampaignService({
    store: deps.store,
    profiles: deps.config.profiles,
    defaultProfile: deps.config.numbers.default,
    carriers: deps.carriers,
    carriersWithoutMachineDetection: deps.carriersWithoutMachineDetection ?? [],
    logger,
    clock,
    dialer,
    dialPolicy: deps.dialPolicy,
    fetchPolicy: deps.fetchPolicy,
  });
  return { service, dialer };
}
