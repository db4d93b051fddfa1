// The carriers this server serves and places calls with, built from the configuration and the list
// in registry.ts. Outside production every carrier is served, those without credentials through
// the simulated carrier; in production a carrier is served only when it can verify its requests,
// and the routes of the others refuse every request, naming the variable to set.
import type { CarrierAdapter } from '../call/carrier-port.js';
import type { Config } from '../config/types.js';
import { BadSignatureError } from '../errors.js';
import { type Carrier, type CarrierAdapterDeps, settingsOf } from './carrier.js';
import type { CallPlacer } from '../outbound/ports.js';
import { CARRIERS } from './registry.js';
import { refusedCarrierRoutes } from './refused-routes.js';
import type { SimulationKeys } from './simulation-keys.js';

export { SIMULATED_CALLER_ID, SIMULATED_TELNYX_CONNECTION_ID } from './simulated.js';

export type BuildAdapterDeps = Omit<CarrierAdapterDeps, 'simulationKeys'> & {
  /** The simulated carrier's own signing keys (outside production), trusted for carriers without credentials. */
  simulationKeys?: SimulationKeys | null;
};

export function buildCarrierAdapters(
  config: Config,
  deps: BuildAdapterDeps,
  carriers: readonly Carrier[] = CARRIERS,
): CarrierAdapter[] {
  // The simulation's keys are trusted only for the carriers it serves: those with no credentials.
  const simulated = new Set(deps.simulationKeys ? carriersWithoutCredentials(config, carriers) : []);
  return carriers.map((carrier) => {
    const adapter = carrier.createAdapter(config, {
      ...deps,
      simulationKeys: simulated.has(carrier.name) ? (deps.simulationKeys ?? null) : null,
    });
    return served(config, carrier) ? adapter : refusing(adapter, carrier);
  });
}

/** Whether the carrier is served: always outside production; in production, once it is configured. */
export function served(config: Config, carrier: Carrier): boolean {
  if (config.nodeEnv !== 'production') return true;
  const settings = settingsOf(config, carrier);
  return carrier.verifies(settings) || carrier.hasCredentials(settings);
}

/** A carrier production does not serve: every request and media upgrade refused, saying what to set. */
function refusing(adapter: CarrierAdapter, carrier: Carrier): CarrierAdapter {
  const key = carrier.verifiedBy.at(-1)!;
  const message = `${carrier.name} requests are refused: ${key} is not set`;
  return {
    ...adapter,
    verified: false,
    control: null,
    routes: (intake) => refusedCarrierRoutes(carrier.name, message, intake),
    verifyUpgrade: () => {
      throw new BadSignatureError(message);
    },
  };
}

export interface CallPlacerDeps {
  /**
   * The built-in simulated carrier API (src/sim/carrier-api/): carriers with no credentials place
   * their calls there, so outbound calls and campaigns run with no account.
   */
  simulatedApiUrl?: string | null;
}

const REST_TIMEOUT_MS = 10_000;

/** The carriers that can place outbound calls here, the default first. */
export function buildCallPlacers(
  config: Config,
  deps: CallPlacerDeps = {},
  carriers: readonly Carrier[] = CARRIERS,
): CallPlacer[] {
  const context = {
    simulatedApiUrl: deps.simulatedApiUrl ?? null,
    routedNumber: Object.keys(config.numbers.routes).find((number) => number.startsWith('+')) ?? null,
    timeoutMs: REST_TIMEOUT_MS,
  };
  return carriers.flatMap((carrier) => carrier.createPlacer(config, context) ?? []);
}

/** The carriers whose configuration holds no credential at all: only they are simulated. */
export function carriersWithoutCredentials(
  config: Config,
  carriers: readonly Carrier[] = CARRIERS,
): string[] {
  return carriers
    .filter((carrier) => !carrier.hasCredentials(settingsOf(config, carrier)))
    .map((carrier) => carrier.name);
}

/**
 * What start says of carriers whose requests are not verified: in production one line for each,
 * refused; elsewhere one line naming them all, taken unverified (or as the simulated carrier's).
 */
export function unverifiedCarrierWarnings(config: Config, carriers: readonly Carrier[] = CARRIERS): string[] {
  const unverified = carriers
    .filter((carrier) => !carrier.verifies(settingsOf(config, carrier)))
    .map((carrier) => ({ name: carrier.name, key: carrier.verifiedBy.at(-1)! }));
  if (config.nodeEnv === 'production') {
    return unverified.map(({ name, key }) => `${key} is not set: ${name} requests are refused until it is`);
  }
  if (unverified.length === 0) return [];
  const listed = unverified.map(({ name, key }) => `${name} (${key} is not set)`).join(', ');
  return [`carrier requests are not verified for ${listed}`];
}
