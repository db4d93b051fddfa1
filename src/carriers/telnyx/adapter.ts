// Telnyx as a carrier of the call core (docs/protocols/telnyx.md): its media codec, the downlink
// rules of its RTP stream, Call Control as the call's control, and its webhook routes.
import type { Logger } from 'pino';
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { CarrierAdapter, CarrierControl, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import type { Metrics } from '../../metrics/metrics.js';
import { createTelnyxCodec } from './codec.js';
import { createTelnyxRest, type TelnyxRest } from './rest.js';
import type { SimulationKeys } from '../simulation-keys.js';
import { telnyxRoutes } from './routes.js';
import { importTelnyxPublicKeys } from './signature.js';

export interface TelnyxAdapterDeps {
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  /**
   * The built-in simulated carrier API, used when TELNYX_API_KEY is not set so calls can still be
   * answered locally; ignored when a key is set.
   */
  simulatedApiUrl?: string;
  /** The simulated carrier's own keys, trusted only while Telnyx has no credentials. */
  simulationKeys?: SimulationKeys | null;
}

export const TELNYX_REST_TIMEOUT_MS = 5_000;
const FRAME_MS = 20;
/** Placed in the Authorization header of requests to the simulated API, which wants one. */
const SIMULATED_API_KEY = 'simulated';

/**
 * Whole 20 ms frames, and never less than one in a message: Telnyx refuses a `media` message under
 * 20 ms (docs/protocols/telnyx.md section 4), so a reply's last partial frame is padded with silence.
 */
export function telnyxDownlink(format: MediaFormat): DownlinkRules {
  const frameBytes = bytesPerMs(format) * FRAME_MS;
  return { frameBytes, minMessageBytes: frameBytes };
}

export function createTelnyxAdapter(
  config: Config,
  deps: TelnyxAdapterDeps,
): CarrierAdapter & { rest: TelnyxRest | null } {
  const settings = config.telnyx;
  const now = deps.now ?? Date.now;
  const api =
    settings.apiKey !== null
      ? { url: settings.apiUrl, key: settings.apiKey }
      : deps.simulatedApiUrl !== undefined
        ? { url: deps.simulatedApiUrl, key: SIMULATED_API_KEY }
        : null;
  const rest =
    api &&
    createTelnyxRest({
      apiUrl: api.url,
      apiKey: api.key,
      connectionId: settings.connectionId,
      timeoutMs: TELNYX_REST_TIMEOUT_MS,
    });
  const publicKeys = importTelnyxPublicKeys(settings.publicKeys);
  const log = deps.logger.child({ carrier: 'telnyx' });

  const counted = async (operation: string, request: Promise<void>): Promise<void> => {
    try {
      await request;
      deps.metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'ok' });
    } catch (err) {
      deps.metrics.carrierApiRequests.inc({ carrier: 'telnyx', operation, outcome: 'failed' });
      throw err;
    }
  };
  const control: CarrierControl | null = rest && {
    hangup: (callSid) => counted('hang up call', rest.hangup(callSid)),
    transfer: (callSid, target) => counted('transfer call', rest.transfer(callSid, target)),
  };

  return {
    name: 'telnyx',
    verified: publicKeys.length > 0,
    rest,
    control,
    createCodec: () =>
      createTelnyxCodec({
        reorder: (outcome) => deps.metrics.carrierMediaReorder.inc({ carrier: 'telnyx', outcome }),
        streamError: ({ code, title, callSid }) => {
          deps.metrics.carrierStreamErrors.inc({ carrier: 'telnyx' });
          log.warn({ callSid, code, title }, 'telnyx reported a media stream error');
        },
      }),
    downlink: telnyxDownlink,
    routes: (intake) =>
      telnyxRoutes({
        intake,
        rest,
        publicKeys,
        simulationPublicKeys: deps.simulationKeys
          ? importTelnyxPublicKeys([deps.simulationKeys.telnyxPublicKey])
          : [],
        refuseUnverified: settings.refuseUnverified,
        codec: settings.streamCodec,
        logger: deps.logger,
        metrics: deps.metrics,
        now,
      }),
  };
}
