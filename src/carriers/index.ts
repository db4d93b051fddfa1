// The carriers this server speaks, built from the configuration. Adding a carrier is its folder
// under src/carriers/ and one line here; nothing in the call core changes. Every carrier's routes
// are served; each verifies its requests once its credentials are set.
import type { Logger } from 'pino';
import type { CarrierAdapter } from '../call/carrier-port.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import { createExotelAdapter } from './exotel/adapter.js';
import { createPlivoAdapter } from './plivo/adapter.js';
import { createTelnyxAdapter } from './telnyx/adapter.js';
import { createTwilioAdapter } from './twilio/adapter.js';
import { createVonageAdapter } from './vonage/adapter.js';
import type { ClaimOnce } from './vonage/replay-guard.js';

/** What an adapter may need besides its configuration. */
export interface CarrierAdapterDeps {
  logger: Logger;
  metrics: Metrics;
  /** The shared store's single-use claim, so a replayed signed webhook is refused on every instance. */
  claimOnce?: ClaimOnce;
  /**
   * The built-in simulated carrier API (src/sim/carrier-api/), for carriers whose calls are answered
   * through their REST API and whose credentials are not set; absent in production.
   */
  simulatedApiUrl?: string;
}

export function buildCarrierAdapters(config: Config, deps: CarrierAdapterDeps): CarrierAdapter[] {
  const rest = {
    logger: deps.logger,
    metrics: deps.metrics,
    ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
  };
  return [
    createTwilioAdapter(config),
    createTelnyxAdapter(config, rest),
    createPlivoAdapter(config, rest),
    createVonageAdapter(config, deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
    createExotelAdapter(config),
  ];
}
