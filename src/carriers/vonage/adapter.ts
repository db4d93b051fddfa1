// Vonage as a carrier of the call core (docs/protocols/vonage.md): the binary-frame codec, the
// answer and event webhooks, and the Voice API for hang-up, transfer and outbound calls.
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { CarrierAdapter, CarrierControl, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import type { CarrierCallState } from '../call-status.js';
import { createAppTokenSource } from './app-token.js';
import { createVonageCodec } from './codec.js';
import type { ClaimOnce } from './replay-guard.js';
import { createVonageRest, type VonageMachineDetection, type VonageRest } from './rest.js';
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

export interface VonageOutboundCall {
  to: string;
  from: string;
  /** Opaque outbound context, carried to the call's answer webhook and so to its stream token. */
  context?: string;
  machineDetection?: VonageMachineDetection;
  ringingTimerS?: number;
}

/** What the dialer needs from Vonage: place a call, read its state, end it. */
export interface VonageOutbound {
  originate(call: VonageOutboundCall): Promise<CarrierCallState>;
  status(callSid: string): Promise<CarrierCallState>;
  hangup(callSid: string): Promise<void>;
}

export interface VonageAdapter extends CarrierAdapter {
  /** Null unless the application id and private key are set. */
  readonly outbound: VonageOutbound | null;
}

export interface VonageAdapterDeps {
  /** The shared store's claimOnce, so a replayed webhook is refused on every instance. */
  claimOnce?: ClaimOnce;
  nowMs?: () => number;
  restTimeoutMs?: number;
}

/** Exactly one 20 ms frame per message, paced: Vonage plays each message as one frame. */
export function vonageDownlink(format: MediaFormat): DownlinkRules {
  const frameBytes = Math.round(bytesPerMs(format) * FRAME_MS);
  return { frameBytes, maxMessageBytes: frameBytes, paceAheadMs: VONAGE_PACE_AHEAD_MS };
}

// The public URL is read per call: a test server learns its port only after listening.
function outboundFor(rest: VonageRest, config: Config): VonageOutbound {
  return {
    originate: (call) => {
      const publicUrl = config.publicUrl;
      const query = new URLSearchParams({ direction: 'outbound' });
      if (call.context !== undefined) query.set('context', call.context);
      return rest.originate({
        to: call.to,
        from: call.from,
        answerUrl: `${publicUrl}/carriers/vonage/answer?${query}`,
        eventUrl: `${publicUrl}/carriers/vonage/events`,
        machineDetection: call.machineDetection,
        ringingTimerS: call.ringingTimerS,
      });
    },
    status: (callSid) => rest.status(callSid),
    hangup: (callSid) => rest.hangup(callSid),
  };
}

export function createVonageAdapter(config: Config, deps: VonageAdapterDeps = {}): VonageAdapter {
  const { applicationId, privateKey, signatureSecrets, apiKey, apiUrl } = config.vonage;
  const rest =
    applicationId !== null && privateKey !== null
      ? createVonageRest({
          apiUrl,
          token: createAppTokenSource({ applicationId, privateKey, nowMs: deps.nowMs }),
          timeoutMs: deps.restTimeoutMs ?? REST_TIMEOUT_MS,
        })
      : null;
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
    outbound: rest && outboundFor(rest, config),
    routes: (intake) =>
      vonageRoutes({
        intake,
        signatureSecrets,
        applicationId,
        apiKey,
        refuseUnverified: config.nodeEnv === 'production',
        claimOnce: deps.claimOnce,
        nowMs: deps.nowMs,
      }),
  };
}
