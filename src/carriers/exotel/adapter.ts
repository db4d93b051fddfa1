// Exotel as a carrier of the call core (docs/protocols/exotel.md): the Voicebot stream codec, the
// applet's dynamic URL, Basic auth on the media upgrade, and REST for outbound calls.
import type { FastifyRequest } from 'fastify';
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { CarrierAdapter, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import { UnauthorizedError } from '../../errors.js';
import type { CarrierCallState } from '../call-status.js';
import type { CallPlacer } from '../placer.js';
import { createExotelCodec } from './codec.js';
import { createExotelRest, type ExotelRest } from './rest.js';
import { exotelRoutes } from './routes.js';
import { basicAuthMatches, upgradeCredentials } from './upgrade-auth.js';

const REST_TIMEOUT_MS = 5_000;
const FRAME_MS = 20;
/** Exotel plays outbound chunks without gaps only in multiples of 320 bytes, from 3,200 to 100,000. */
const CHUNK_MULTIPLE_BYTES = 320;
const MIN_CHUNK_BYTES = 3_200;
const MAX_CHUNK_BYTES = 100_000;

export interface ExotelOutboundCall {
  to: string;
  /** The ExoPhone the call comes from. */
  callerId: string;
  /** The Exotel flow holding the Voicebot applet that points at `/carriers/exotel/stream`. */
  flowUrl: string;
  /** Opaque outbound context; Exotel passes it back as `CustomField`. */
  context?: string;
  timeLimitS?: number;
  timeoutS?: number;
}

/** What the dialer needs from Exotel: place a call and read its state (there is no hang-up). */
export interface ExotelOutbound {
  originate(call: ExotelOutboundCall): Promise<CarrierCallState>;
  status(callSid: string): Promise<CarrierCallState>;
}

export interface ExotelAdapter extends CarrierAdapter {
  /** Null unless the account sid, API key and token are set. */
  readonly outbound: ExotelOutbound | null;
}

export interface ExotelAdapterDeps {
  restTimeoutMs?: number;
  /** The placer of Exotel's outbound calls: their contexts, and their status read back. */
  placer?: Pick<CallPlacer, 'contextOf' | 'status'> | null;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Whole 20 ms frames that are also multiples of 320 bytes (320 itself for linear PCM at 8 kHz),
 * at least 3,200 bytes a message and at most 100,000: Exotel's rule for gap-free playback.
 */
export function exotelDownlink(format: MediaFormat): DownlinkRules {
  const frame = Math.round(bytesPerMs(format) * FRAME_MS);
  const frameBytes = (frame * CHUNK_MULTIPLE_BYTES) / gcd(frame, CHUNK_MULTIPLE_BYTES);
  return {
    frameBytes,
    minMessageBytes: Math.ceil(MIN_CHUNK_BYTES / frameBytes) * frameBytes,
    maxMessageBytes: Math.floor(MAX_CHUNK_BYTES / frameBytes) * frameBytes,
  };
}

function outboundFor(rest: ExotelRest, config: Config): ExotelOutbound {
  return {
    originate: (call) =>
      rest.originate({
        to: call.to,
        callerId: call.callerId,
        flowUrl: call.flowUrl,
        customField: call.context,
        // Read per call: a test server learns its port only after listening.
        statusCallback: `${config.publicUrl}/carriers/exotel/status`,
        timeLimitS: call.timeLimitS,
        timeoutS: call.timeoutS,
      }),
    status: (callSid) => rest.status(callSid),
  };
}

export function createExotelAdapter(config: Config, deps: ExotelAdapterDeps = {}): ExotelAdapter {
  const { accountSid, apiKey, apiToken, apiUrl } = config.exotel;
  const credentials = apiKey !== null && apiToken !== null ? upgradeCredentials(apiKey, apiToken) : null;
  const refuseUnverified = config.nodeEnv === 'production';
  const rest =
    accountSid !== null && apiKey !== null && apiToken !== null
      ? createExotelRest({
          apiUrl,
          accountSid,
          apiKey,
          apiToken,
          timeoutMs: deps.restTimeoutMs ?? REST_TIMEOUT_MS,
        })
      : null;
  return {
    name: 'exotel',
    verified: credentials !== null,
    createCodec: createExotelCodec,
    downlink: exotelDownlink,
    verifyUpgrade(req: FastifyRequest): void {
      if (credentials === null) {
        if (refuseUnverified)
          throw new UnauthorizedError('Exotel media upgrades cannot be authenticated here');
        return;
      }
      if (!basicAuthMatches(req.headers.authorization, credentials.username, credentials.password)) {
        throw new UnauthorizedError('the media upgrade lacks the expected Basic auth');
      }
    },
    // Exotel's classic API can neither hang up nor transfer a live call. With no control, the core
    // ends a call by closing the stream: the Voicebot applet ends and the flow moves on (or hangs up).
    control: null,
    outbound: rest && outboundFor(rest, config),
    routes: (intake) =>
      exotelRoutes({
        intake,
        upgradeCredentials: credentials,
        refuseUnverified,
        placer: deps.placer ?? null,
      }),
  };
}
