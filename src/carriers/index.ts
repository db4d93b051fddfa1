// The carriers this server speaks, built from the configuration. Adding a carrier is its folder
// under src/carriers/ and one line here; nothing in the call core changes.
import type { Logger } from 'pino';
import type { CarrierAdapter } from '../call/carrier-port.js';
import type { Config } from '../config/types.js';
import { createTwilioAdapter } from './twilio/adapter.js';

/** What an adapter may need besides its configuration. */
export interface CarrierAdapterDeps {
  logger: Logger;
}

export function buildCarrierAdapters(config: Config, _deps: CarrierAdapterDeps): CarrierAdapter[] {
  return [createTwilioAdapter(config)];
}
