// One carrier, whole: how it reads its variables, the adapter the call core serves, the placer of its
// outbound calls, and the request `callbridge doctor` checks its credentials with. Each
// src/carriers/<name>/carrier.ts exports one, and src/carriers/registry.ts lists them: adding a
// carrier is its folder and one line there (docs/carriers.md).
import type { Logger } from 'pino';
import type { CarrierAdapter } from '../call/carrier-port.js';
import type { CarrierSettingsReader } from '../config/carrier-settings.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CallPlacer } from '../outbound/ports.js';
import type { ClaimOnce } from './replay-guard.js';
import type { SimulationKeys } from './simulation-keys.js';

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
  /** The outbound placers, for carriers whose webhooks look a placed call up (Exotel). */
  placers?: readonly CallPlacer[];
  /**
   * The simulated carrier's own signing keys, for this carrier only when the simulation serves it
   * (no credentials, outside production); null otherwise.
   */
  simulationKeys: SimulationKeys | null;
}

/** What a placer may need besides its configuration. */
export interface CallPlacerContext {
  /** The simulated carrier API carriers without credentials place their calls on; null: none. */
  simulatedApiUrl: string | null;
  /** The first number routed to a profile, a caller ID for requests that name none; null: none. */
  routedNumber: string | null;
  timeoutMs: number;
}

/** One request that changes nothing and that the carrier answers only for valid credentials. */
export interface CredentialsProbe {
  /** `Telnyx API`: the line's subject and the name of an unreachable host. */
  label: string;
  apiUrl: string;
  /** The line's subject; default `<label> <apiUrl>`. */
  subject?: string;
  url: string;
  authorization: () => Promise<string>;
  /** The variables to check when the credentials are refused. */
  variables: string;
  /** The account's state in a 200 answer, where the carrier says it (Twilio: `active`…). */
  accountState?: (body: unknown) => string | undefined;
}

export interface Carrier<S = unknown> extends CarrierSettingsReader<S> {
  /** The carrier as the call core serves it. */
  createAdapter(config: Config, deps: CarrierAdapterDeps): CarrierAdapter;
  /** Its outbound calls' placer: with its credentials, else on the simulated API; null: it places none. */
  createPlacer(config: Config, context: CallPlacerContext): CallPlacer | null;
  /** The request that checks its credentials; null when none are set. */
  credentialsProbe(settings: S): CredentialsProbe | null;
}

/** A carrier's settings in a configuration, as its reader wrote them. */
export function settingsOf<S>(config: Config, carrier: Carrier<S>): S {
  return (config as unknown as Record<string, S>)[carrier.name]!;
}
