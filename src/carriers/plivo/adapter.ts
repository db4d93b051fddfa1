// Plivo as a carrier of the call core (docs/protocols/plivo.md): its Audio Streams codec, the
// downlink rules of its stream, its REST API as the call's control, and its webhook routes.
import type { Logger } from 'pino';
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { ClaimOnce } from '../replay-guard.js';
import type { SimulationKeys } from '../simulation-keys.js';
import type { CarrierAdapter, CarrierControl, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import { createPlivoCodec } from './codec.js';
import { createPlivoRest, type PlivoRest } from './rest.js';
import { plivoRoutes } from './routes.js';

export interface PlivoAdapterDeps {
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  /**
   * The built-in simulated carrier API, used when PLIVO_AUTH_ID is not set so hang-up and transfer
   * work locally; ignored when credentials are set.
   */
  simulatedApiUrl?: string;
  /** The shared store's claimOnce, so a replayed request is refused on every instance. */
  claimOnce?: ClaimOnce;
  simulationKeys?: SimulationKeys | null;
}

export const PLIVO_REST_TIMEOUT_MS = 5_000;
const FRAME_MS = 20;
/** The account id used in REST paths against the simulated API. */
export const PLIVO_SIMULATED_AUTH_ID = 'MASIMULATED000000000';

export function createPlivoAdapter(
  config: Config,
  deps: PlivoAdapterDeps,
): CarrierAdapter & { rest: PlivoRest | null } {
  const settings = config.plivo;
  const api =
    settings.authId !== null && settings.authToken !== null
      ? { url: settings.apiUrl, authId: settings.authId, authToken: settings.authToken }
      : deps.simulatedApiUrl !== undefined
        ? { url: deps.simulatedApiUrl, authId: PLIVO_SIMULATED_AUTH_ID, authToken: 'simulated' }
        : null;
  const rest =
    api &&
    createPlivoRest({
      apiUrl: api.url,
      authId: api.authId,
      authToken: api.authToken,
      publicUrl: () => config.publicUrl,
      timeoutMs: PLIVO_REST_TIMEOUT_MS,
    });

  const counted = async (operation: string, request: Promise<unknown>): Promise<void> => {
    try {
      await request;
      deps.metrics.carrierApiRequests.inc({ carrier: 'plivo', operation, outcome: 'ok' });
    } catch (err) {
      deps.metrics.carrierApiRequests.inc({ carrier: 'plivo', operation, outcome: 'failed' });
      throw err;
    }
  };
  const control: CarrierControl | null = rest && {
    hangup: (callSid) => counted('hang up call', rest.hangup(callSid)),
    transfer: (callSid, target) => counted('transfer call', rest.transfer(callSid, target)),
  };

  return {
    name: 'plivo',
    verified: settings.authToken !== null,
    rest,
    control,
    createCodec: createPlivoCodec,
    downlink: (format: MediaFormat): DownlinkRules => ({ frameBytes: bytesPerMs(format) * FRAME_MS }),
    routes: (intake) =>
      plivoRoutes({
        intake,
        authToken: settings.authToken,
        refuseUnverified: settings.refuseUnverified,
        publicUrl: () => config.publicUrl,
        logger: deps.logger,
        metrics: deps.metrics,
        now: deps.now ?? Date.now,
        ...(deps.claimOnce ? { claimOnce: deps.claimOnce } : {}),
        simulationAuthToken: deps.simulationKeys?.plivoAuthToken ?? null,
      }),
  };
}
