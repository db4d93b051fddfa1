// The carriers this server speaks, built from the configuration. Adding a carrier is its folder
// under src/carriers/ and one line here; nothing in the call core changes. Every carrier's routes
// are served; each verifies its requests once its credentials are set.
import type { Logger } from 'pino';
import type { CarrierAdapter } from '../call/carrier-port.js';
import type { Config } from '../config/types.js';
import type { Metrics } from '../metrics/metrics.js';
import { createExotelAdapter } from './exotel/adapter.js';
import { createExotelPlacer } from './exotel/placer.js';
import { createExotelRest } from './exotel/rest.js';
import type { CallPlacer } from '../outbound/ports.js';
import { createPlivoAdapter, PLIVO_REST_TIMEOUT_MS, PLIVO_SIMULATED_AUTH_ID } from './plivo/adapter.js';
import { createPlivoPlacer } from './plivo/placer.js';
import { createPlivoRest } from './plivo/rest.js';
import { createTelnyxAdapter } from './telnyx/adapter.js';
import { createTelnyxPlacer } from './telnyx/placer.js';
import { createTelnyxRest } from './telnyx/rest.js';
import { createTwilioAdapter } from './twilio/adapter.js';
import { createTwilioPlacer } from './twilio/placer.js';
import { createTwilioRest } from './twilio/rest.js';
import { createVonageAdapter, vonageRestFor } from './vonage/adapter.js';
import { createVonagePlacer } from './vonage/placer.js';
import type { ClaimOnce } from './replay-guard.js';
import { carriersWithoutCredentials, type SimulationKeys } from './simulation-keys.js';

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
  /** The simulated carrier's own signing keys (outside production), trusted for carriers without credentials. */
  simulationKeys?: SimulationKeys | null;
}

export function buildCarrierAdapters(config: Config, deps: CarrierAdapterDeps): CarrierAdapter[] {
  const rest = {
    logger: deps.logger,
    metrics: deps.metrics,
    ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
  };
  // The simulation's keys are trusted only for the carriers it serves: those with no credentials.
  const simulated = new Set(deps.simulationKeys ? carriersWithoutCredentials(config) : []);
  const keysFor = (carrier: string) => (simulated.has(carrier) ? (deps.simulationKeys ?? null) : null);
  return [
    createTwilioAdapter(config, { simulationKeys: keysFor('twilio') }),
    createTelnyxAdapter(config, { ...rest, simulationKeys: keysFor('telnyx') }),
    createPlivoAdapter(config, {
      ...rest,
      ...(deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
      simulationKeys: keysFor('plivo'),
    }),
    createVonageAdapter(config, {
      simulationKeys: keysFor('vonage'),
      ...(deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
      ...(deps.simulatedApiUrl !== undefined ? { simulatedApiUrl: deps.simulatedApiUrl } : {}),
    }),
    createExotelAdapter(config, {
      placer: deps.placers?.find((placer) => placer.carrier === 'exotel') ?? null,
    }),
  ];
}

export interface CallPlacerDeps {
  /**
   * The built-in simulated carrier API (src/sim/carrier-api/): carriers with no credentials place
   * their calls there, so outbound calls and campaigns run with no account.
   */
  simulatedApiUrl?: string | null;
}

const REST_TIMEOUT_MS = 10_000;
/** The caller ID of simulated calls when a request names none and no number is routed. */
export const SIMULATED_CALLER_ID = '+15005550006';
/** The Call Control application simulated Telnyx calls are placed through when none is configured. */
export const SIMULATED_TELNYX_CONNECTION_ID = 'simulated';
/** The account and flow of simulated Exotel calls when no flow is configured. */
const SIMULATED_EXOTEL_ACCOUNT = 'callbridgesim1';
const SIMULATED_EXOTEL_FLOW = `http://my.exotel.com/${SIMULATED_EXOTEL_ACCOUNT}/exoml/start_voice/1`;

/** The carriers that can place outbound calls here, the default first. */
export function buildCallPlacers(config: Config, deps: CallPlacerDeps = {}): CallPlacer[] {
  const placers: CallPlacer[] = [];
  const routed = Object.keys(config.numbers.routes).find((number) => number.startsWith('+')) ?? null;
  const simulated = deps.simulatedApiUrl ?? null;
  const { accountSid, authToken } = config.twilio;
  if (accountSid && authToken) {
    const rest = createTwilioRest({
      apiUrl: config.twilio.apiUrl,
      accountSid,
      authToken,
      timeoutMs: REST_TIMEOUT_MS,
    });
    placers.push(createTwilioPlacer({ rest, publicUrl: () => config.publicUrl, defaultFrom: routed }));
  } else if (simulated !== null) {
    // The simulated API takes any credentials; these name no account.
    const rest = createTwilioRest({
      apiUrl: simulated,
      accountSid: 'ACsimulated',
      authToken: 'simulated',
      timeoutMs: REST_TIMEOUT_MS,
    });
    placers.push(
      createTwilioPlacer({
        rest,
        publicUrl: () => config.publicUrl,
        defaultFrom: routed ?? SIMULATED_CALLER_ID,
      }),
    );
  }
  const telnyx = telnyxPlacer(config, simulated, routed);
  if (telnyx) placers.push(telnyx);
  const plivo = plivoPlacer(config, simulated, routed);
  if (plivo) placers.push(plivo);
  const vonage = vonageRestFor(config, { simulatedApiUrl: simulated, timeoutMs: REST_TIMEOUT_MS });
  if (vonage) {
    const real = config.vonage.applicationId !== null && config.vonage.privateKey !== null;
    placers.push(
      createVonagePlacer({
        rest: vonage,
        publicUrl: () => config.publicUrl,
        defaultFrom: real ? routed : (routed ?? SIMULATED_CALLER_ID),
      }),
    );
  }
  const exotel = exotelPlacer(config, simulated, routed);
  if (exotel) placers.push(exotel);
  return placers;
}

/** Exotel's placer: its REST API with credentials and a flow, else the simulated one. */
function exotelPlacer(config: Config, simulated: string | null, routed: string | null): CallPlacer | null {
  const { accountSid, apiKey, apiToken, apiUrl, flowUrl } = config.exotel;
  if (accountSid && apiKey && apiToken) {
    // Without a flow there is nothing for an answered call to run: Exotel places no calls here.
    if (flowUrl === null) return null;
    const rest = createExotelRest({ apiUrl, accountSid, apiKey, apiToken, timeoutMs: REST_TIMEOUT_MS });
    return createExotelPlacer({ rest, flowUrl, publicUrl: () => config.publicUrl, defaultFrom: routed });
  }
  if (simulated === null) return null;
  const rest = createExotelRest({
    apiUrl: simulated,
    accountSid: SIMULATED_EXOTEL_ACCOUNT,
    apiKey: 'simulated',
    apiToken: 'simulated',
    timeoutMs: REST_TIMEOUT_MS,
  });
  return createExotelPlacer({
    rest,
    flowUrl: flowUrl ?? SIMULATED_EXOTEL_FLOW,
    publicUrl: () => config.publicUrl,
    defaultFrom: routed ?? SIMULATED_CALLER_ID,
  });
}

/** Telnyx's placer: its REST API with a key and a Call Control application, else the simulated one. */
function telnyxPlacer(config: Config, simulated: string | null, routed: string | null): CallPlacer | null {
  const { apiKey, apiUrl, connectionId } = config.telnyx;
  const api =
    apiKey !== null
      ? // Outbound calls need the Call Control application to place them through.
        connectionId !== null
        ? { apiUrl, apiKey, connectionId, defaultFrom: routed }
        : null
      : simulated !== null
        ? {
            apiUrl: simulated,
            apiKey: 'simulated',
            connectionId: connectionId ?? SIMULATED_TELNYX_CONNECTION_ID,
            defaultFrom: routed ?? SIMULATED_CALLER_ID,
          }
        : null;
  if (api === null) return null;
  const rest = createTelnyxRest({ ...api, timeoutMs: REST_TIMEOUT_MS });
  return createTelnyxPlacer({ rest, publicUrl: () => config.publicUrl, defaultFrom: api.defaultFrom });
}

/** Plivo's placer: its REST API with credentials, else the simulated one; null with neither. */
function plivoPlacer(config: Config, simulated: string | null, routed: string | null): CallPlacer | null {
  const { authId, authToken, apiUrl } = config.plivo;
  const api =
    authId !== null && authToken !== null
      ? { apiUrl, authId, authToken, defaultFrom: routed }
      : simulated !== null
        ? // The simulated API takes any credentials whose Auth ID matches the path.
          {
            apiUrl: simulated,
            authId: PLIVO_SIMULATED_AUTH_ID,
            authToken: 'simulated',
            defaultFrom: routed ?? SIMULATED_CALLER_ID,
          }
        : null;
  if (api === null) return null;
  const publicUrl = () => config.publicUrl;
  const rest = createPlivoRest({ ...api, publicUrl, timeoutMs: PLIVO_REST_TIMEOUT_MS });
  return createPlivoPlacer({ rest, publicUrl, defaultFrom: api.defaultFrom });
}
