// Twilio as a carrier adapter (docs/protocols/twilio.md): its Media Streams codec, its webhooks,
// the signature on webhooks and on the media upgrade, and call control over its REST API.
import type { FastifyRequest } from 'fastify';
import { bytesPerMs } from '../../audio/format.js';
import type { CarrierAdapter, CarrierControl } from '../../call/carrier-port.js';
import { publicWsBase } from '../../call/intake/media-url.js';
import type { Config } from '../../config/types.js';
import { BadSignatureError } from '../../errors.js';
import type { SimulationKeys } from '../simulation-keys.js';
import { createTwilioCodec } from './codec.js';
import { createTwilioRest } from './rest.js';
import { twilioRoutes } from './routes.js';
import { validateTwilioSignature } from './signature.js';

const REST_TIMEOUT_MS = 5_000;
/** Outbound audio in whole 20 ms frames: any size is accepted, but whole frames avoid jitter. */
const FRAME_MS = 20;

export function createTwilioAdapter(
  config: Config,
  deps: { simulationKeys?: SimulationKeys | null } = {},
): CarrierAdapter {
  const { accountSid, authToken } = config.twilio;
  const rest =
    accountSid && authToken
      ? createTwilioRest({ apiUrl: config.twilio.apiUrl, accountSid, authToken, timeoutMs: REST_TIMEOUT_MS })
      : null;
  // Hang up with Status=completed, transfer with <Dial> TwiML.
  const control: CarrierControl | null = rest && {
    hangup: (callSid) => rest.hangup(callSid),
    transfer: (callSid, target) => rest.transfer(callSid, target),
  };
  const adapter: CarrierAdapter = {
    name: 'twilio',
    verified: authToken !== null,
    createCodec: createTwilioCodec,
    downlink: (format) => ({ frameBytes: Math.round(bytesPerMs(format) * FRAME_MS) }),
    control,
    routes: (intake) =>
      twilioRoutes(config, intake, { simulationAuthToken: deps.simulationKeys?.twilioAuthToken ?? null }),
  };
  if (authToken) {
    // The upgrade is signed over the wss:// URL as called (its path holds the token), with no params.
    adapter.verifyUpgrade = (req: FastifyRequest) => {
      const url = `${publicWsBase(config.publicUrl)}${req.url}`;
      if (!validateTwilioSignature(authToken, req.headers['x-twilio-signature'], url, {})) {
        throw new BadSignatureError('X-Twilio-Signature does not match this media stream');
      }
    };
  }
  return adapter;
}
