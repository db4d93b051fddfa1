// Exotel as a carrier of the call core (docs/protocols/exotel.md): the Voicebot stream codec, the
// applet's dynamic URL, its allowed networks and per-call Basic auth on the media upgrade; its calls
// are placed by placer.ts.
import type { FastifyRequest } from 'fastify';
import { bytesPerMs, type MediaFormat } from '../../audio/format.js';
import type { CarrierAdapter, DownlinkRules } from '../../call/carrier-port.js';
import type { Config } from '../../config/types.js';
import { UnauthorizedError } from '../../errors.js';
import type { CallPlacer } from '../../outbound/ports.js';
import { createExotelCodec } from './codec.js';
import { exotelRoutes } from './routes.js';
import { networkMatcher } from './networks.js';
import { basicAuthMatches, upgradeCredentials } from './upgrade-auth.js';

const FRAME_MS = 20;
/** Exotel plays outbound chunks without gaps only in multiples of 320 bytes, from 3,200 to 100,000. */
const CHUNK_MULTIPLE_BYTES = 320;
const MIN_CHUNK_BYTES = 3_200;
const MAX_CHUNK_BYTES = 100_000;

export interface ExotelAdapterDeps {
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

export function createExotelAdapter(config: Config, deps: ExotelAdapterDeps = {}): CarrierAdapter {
  const secret = config.streamTokenSecret;
  const { allowedCidrs } = config.exotel;
  const fromAllowedNetwork = allowedCidrs === null ? null : networkMatcher(allowedCidrs);
  return {
    name: 'exotel',
    // Exotel signs nothing: its networks, once named, are what verify its requests.
    verified: fromAllowedNetwork !== null,
    createCodec: createExotelCodec,
    downlink: exotelDownlink,
    verifyUpgrade(req: FastifyRequest): void {
      // The credentials are the call's own, derived from the token in the same URL's path.
      const token = (req.params as { token?: unknown } | undefined)?.token;
      if (typeof token !== 'string' || token === '') {
        throw new UnauthorizedError('an Exotel media upgrade must name its stream token');
      }
      const { username, password } = upgradeCredentials(secret, token);
      if (!basicAuthMatches(req.headers.authorization, username, password)) {
        throw new UnauthorizedError('the media upgrade lacks the expected Basic auth');
      }
    },
    // Exotel's classic API can neither hang up nor transfer a live call. With no control, the core
    // ends a call by closing the stream: the Voicebot applet ends and the flow moves on (or hangs up).
    control: null,
    routes: (intake) =>
      exotelRoutes({
        intake,
        credentialsFor: (streamToken) => upgradeCredentials(secret, streamToken),
        fromAllowedNetwork,
        refuseUnverified: config.nodeEnv === 'production',
        placer: deps.placer ?? null,
      }),
  };
}
