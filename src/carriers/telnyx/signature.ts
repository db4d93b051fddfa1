// Telnyx webhook signatures (docs/protocols/telnyx.md section 7): an Ed25519 signature,
// base64 in `telnyx-signature-ed25519`, over `${telnyx-timestamp}|${raw body}`, checked with the
// account's public key. Timestamps more than 300 s from now are refused, so a captured webhook
// cannot be replayed later.
import { createPublicKey, type KeyObject, verify } from 'node:crypto';

export const TELNYX_SIGNATURE_TOLERANCE_MS = 300_000;

export type TelnyxSignatureCheck =
  { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'bad_signature' };

const ED25519_SIGNATURE_BYTES = 64;
const TIMESTAMP = /^\d{1,12}$/;

/** Imports base64 raw Ed25519 public keys (32 bytes) through JWK; config has checked their form. */
export function importTelnyxPublicKeys(base64Keys: readonly string[]): KeyObject[] {
  return base64Keys.map((key) =>
    createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key, 'base64').toString('base64url') },
      format: 'jwk',
    }),
  );
}

export interface TelnyxSignatureInput {
  signature: string | string[] | undefined;
  timestamp: string | string[] | undefined;
  rawBody: Buffer;
  nowMs: number;
  toleranceMs?: number;
}

export function verifyTelnyxSignature(
  keys: readonly KeyObject[],
  input: TelnyxSignatureInput,
): TelnyxSignatureCheck {
  const { signature, timestamp } = input;
  if (signature === undefined || timestamp === undefined || signature === '' || timestamp === '') {
    return { ok: false, reason: 'missing' };
  }
  // A repeated header arrives as an array: Telnyx sends each once.
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !TIMESTAMP.test(timestamp)) {
    return { ok: false, reason: 'malformed' };
  }
  const signatureBytes = Buffer.from(signature, 'base64');
  if (signatureBytes.length !== ED25519_SIGNATURE_BYTES) return { ok: false, reason: 'malformed' };
  const tolerance = input.toleranceMs ?? TELNYX_SIGNATURE_TOLERANCE_MS;
  if (Math.abs(input.nowMs - Number(timestamp) * 1000) > tolerance) return { ok: false, reason: 'expired' };
  const signed = Buffer.concat([Buffer.from(`${timestamp}|`), input.rawBody]);
  // Ed25519 verification is itself constant-time in the signature; every key is tried so the time
  // taken does not say which one matched.
  let valid = false;
  for (const key of keys) {
    if (verify(null, signed, key, signatureBytes)) valid = true;
  }
  return valid ? { ok: true } : { ok: false, reason: 'bad_signature' };
}
