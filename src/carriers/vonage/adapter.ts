// Vonage as a carrier of the call core (docs/protocols/vonage.md): the binary-frame codec, the
// answer and event webhooks, and the Voice API for hang-up, transfer and outbound calls.
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { CarrierAdapter, CarrierControl, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import { createAppTokenSource, simulatedAppTokenSource } from './app-token.js';
import { createVonageCodec } from './codec.js';
import type { ClaimOnce } from '../replay-guard.js';
import type { SimulationKeys } from '../simulation-keys.js';
import { createVonageRest, type VonageRest } from './rest.js';
import { vonageRoutes } from './routes.js';

const REST_TIMEOUT_MS = 5_000;
const FRAME_MS = 20;
/**
 * How far ahead of real time audio is released to Vonage. Vonage holds at most 3,072 messages
 * (about 61 s of 20 ms frames); one second is 50 frames and their notifies, two orders of magnitude
 * below that, so the buffer cannot overflow however long a reply runs. A second still rides out an
 * event-loop stall or a TCP retransmit without the caller hearing a gap, and a clear discards it
 * all at once anyway, so a deeper buffer would buy nothing.
 */
export const VONAGE_PACE_AHEAD_MS = 1_000;

export interface VonageAdapterDeps {
  /** The shared store's claimOnce, so a replayed webhook is refused on every instance. */
  claimOnce?: ClaimOnce;
  /**
   * The built-in simulated carrier API, used when the application and key are not set so hang-up
   * and transfer work locally; ignored when they are set.
   */
  simulatedApiUrl?: string;
  nowMs?: () => number;
  restTimeoutMs?: number;
  simulationKeys?: SimulationKeys | null;
}

/** Exactly one 20 ms frame per message, paced: Vonage plays each message as one frame. */
export function vonageDownlink(format: MediaFormat): DownlinkRules {
  const frameBytes = Math.round(bytesPerMs(format) * FRAME_MS);
  return { frameBytes, maxMessageBytes: frameBytes, paceAheadMs: VONAGE_PACE_AHEAD_MS };
}

/** The Voice API with the application's key, else the simulated one; null with neither. */
export function vonageRestFor(
  config: Config,
  opts: { simulatedApiUrl?: string | null; nowMs?: () => number; timeoutMs?: number } = {},
): VonageRest | null {
  const { applicationId, privateKey, apiUrl } = config.vonage;
  const timeoutMs = opts.timeoutMs ?? REST_TIMEOUT_MS;
  if (applicationId !== null && privateKey !== null) {
    const token = createAppTokenSource({ applicationId, privateKey, nowMs: opts.nowMs });
    return createVonageRest({ apiUrl, token, timeoutMs });
  }
  if (opts.simulatedApiUrl == null) return null;
  return createVonageRest({ apiUrl: opts.simulatedApiUrl, token: simulatedAppTokenSource(), timeoutMs });
}

export function createVonageAdapter(config: Config, deps: VonageAdapterDeps = {}): CarrierAdapter {
  const { applicationId, signatureSecrets, apiKey } = config.vonage;
  const rest = vonageRestFor(config, {
    simulatedApiUrl: deps.simulatedApiUrl,
    nowMs: deps.nowMs,
    timeoutMs: deps.restTimeoutMs,
  });
  const control: CarrierControl | null = rest && {
    hangup: (callSid) => rest.hangup(callSid),
    transfer: (callSid, target) => rest.transfer(callSid, target),
  };
  return {
    name: 'vonage',
    verified: signatureSecrets.length > 0,
    createCodec: createVonageCodec,
    downlink: vonageDownlink,
    control,
    routes: (intake) =>
      vonageRoutes({
        intake,
        signatureSecrets,
        applicationId,
        apiKey,
        refuseUnverified: config.nodeEnv === 'production',
        claimOnce: deps.claimOnce,
        simulationSecret: deps.simulationKeys?.vonageSignatureSecret ?? null,
        nowMs: deps.nowMs,
      }),
  };
}
