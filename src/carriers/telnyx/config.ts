// Telnyx's variables (docs/protocols/telnyx.md): the REST key, the account's Ed25519 public key
// that verifies webhooks, the Call Control application for outbound calls, the API base and the
// codec of the bidirectional media stream.
import { type Env, envError, envList, envOneOf, envString, envUrl } from '../../config/env.js';
import { BASE_URL } from '../../config/urls.js';

/** The codecs a Telnyx media stream may carry both ways. */
export type TelnyxStreamCodec = 'PCMU' | 'PCMA' | 'L16';

/** Telnyx (docs/protocols/telnyx.md section 1), read by readTelnyx. */
export interface TelnyxConfig {
  apiKey: string | null;
  /** Base64 Ed25519 public keys (32 bytes each); several while a key is rotated. Empty: not verified. */
  publicKeys: string[];
  connectionId: string | null;
  apiUrl: string;
  streamCodec: TelnyxStreamCodec;
  /** NODE_ENV=production without a public key: every Telnyx webhook is refused. */
  refuseUnverified: boolean;
}

declare module '../../config/types.js' {
  interface CarrierConfigs {
    telnyx: TelnyxConfig;
  }
}

export const TELNYX_STREAM_CODECS: readonly TelnyxStreamCodec[] = Object.freeze(['PCMU', 'PCMA', 'L16']);

const ED25519_PUBLIC_KEY_BYTES = 32;
const CONNECTION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function readTelnyx(env: Env, nodeEnv: string): TelnyxConfig {
  const apiKey = envString(env, 'TELNYX_API_KEY') ?? null;
  const publicKeys = envList(env, 'TELNYX_PUBLIC_KEY');
  for (const key of publicKeys) {
    if (!isEd25519PublicKey(key)) {
      throw envError('TELNYX_PUBLIC_KEY', 'must be the base64 of a 32-byte Ed25519 public key', key);
    }
  }
  const connectionId = envString(env, 'TELNYX_CONNECTION_ID') ?? null;
  if (connectionId !== null && !CONNECTION_ID.test(connectionId)) {
    throw envError('TELNYX_CONNECTION_ID', 'must be a Call Control application id', connectionId);
  }
  // A half-configured carrier in production would take calls it cannot verify.
  if (nodeEnv === 'production' && publicKeys.length === 0 && (apiKey !== null || connectionId !== null)) {
    throw envError(
      'TELNYX_PUBLIC_KEY',
      'required when NODE_ENV=production and TELNYX_API_KEY or TELNYX_CONNECTION_ID is set, so Telnyx webhooks are verified',
    );
  }
  const apiUrl = envUrl(env, 'TELNYX_API_URL', BASE_URL(['http', 'https'])) ?? 'https://api.telnyx.com';
  const streamCodec = envOneOf(env, 'TELNYX_STREAM_CODEC', TELNYX_STREAM_CODECS, 'PCMU');
  const refuseUnverified = nodeEnv === 'production' && publicKeys.length === 0;
  return { apiKey, publicKeys, connectionId, apiUrl, streamCodec, refuseUnverified };
}

/** Canonical base64 of exactly 32 bytes (padding included). */
export function isEd25519PublicKey(text: string): boolean {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === ED25519_PUBLIC_KEY_BYTES && bytes.toString('base64') === text;
}
