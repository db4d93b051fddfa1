// HMAC signature checks shared by the providers (docs/protocols/webhook-providers.md section 3: signatures are compared
// in constant time, on the raw bytes received).
import { createHmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { constantTimeEqual } from '../auth.js';
import type { Verification } from './provider.js';

export type HmacAlgorithm = 'sha1' | 'sha256';
export type SignatureEncoding = 'hex' | 'base64';

const DIGEST_BYTES: Record<HmacAlgorithm, number> = { sha1: 20, sha256: 32 };

export function hmac(algorithm: HmacAlgorithm, secret: string, ...signed: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, secret);
  for (const part of signed) mac.update(part);
  return mac.digest();
}

/**
 * Decodes a signature in exactly the encoding the provider uses, or null. Strict on purpose: a hex
 * value where base64 is due (or the reverse) is malformed, not "close enough".
 */
export function decodeDigest(
  value: string,
  encoding: SignatureEncoding,
  algorithm: HmacAlgorithm,
): Buffer | null {
  const bytes = DIGEST_BYTES[algorithm];
  if (encoding === 'hex') {
    return value.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(value) ? Buffer.from(value, 'hex') : null;
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return null;
  const decoded = Buffer.from(value, 'base64');
  // Canonical form only: the round trip rejects stray padding and non-zero trailing bits.
  return decoded.length === bytes && decoded.toString('base64') === value ? decoded : null;
}

/** True when any given signature matches any secret's digest. Every pair is compared: no early exit. */
export function anyMatch(
  given: readonly Buffer[],
  secrets: readonly string[],
  digest: (secret: string) => Buffer,
) {
  let matched = false;
  for (const secret of secrets) {
    const expected = digest(secret);
    for (const signature of given) matched = constantTimeEqual(expected, signature) || matched;
  }
  return matched;
}

/** One header value, or undefined when absent or repeated in a way that cannot be a signature. */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

export interface HeaderCheck {
  headerName: string;
  value: string | undefined;
  algorithm: HmacAlgorithm;
  encoding: SignatureEncoding;
  secrets: readonly string[];
  /** The signed data, in order; concatenated before hashing. */
  signed: (secret: string) => (string | Buffer)[];
}

/** The common case: one header holding one digest over some signed data. */
export function verifyHeaderDigest(check: HeaderCheck): Verification {
  if (check.value === undefined || check.value === '') {
    return { ok: false, reason: 'missing', message: `missing ${check.headerName} header` };
  }
  const given = decodeDigest(check.value, check.encoding, check.algorithm);
  if (!given) {
    return {
      ok: false,
      reason: 'malformed',
      message: `${check.headerName} is not a ${check.encoding} HMAC-${check.algorithm.toUpperCase()}`,
    };
  }
  if (check.secrets.length === 0) return noSecret(check.headerName);
  const ok = anyMatch([given], check.secrets, (secret) =>
    hmac(check.algorithm, secret, ...check.signed(secret)),
  );
  return ok ? { ok: true } : mismatch(check.headerName);
}

export function mismatch(headerName: string): Verification {
  return { ok: false, reason: 'mismatch', message: `${headerName} does not match` };
}

/** Answered like a mismatch: a caller learns nothing about the configuration. */
export function noSecret(headerName: string): Verification {
  return { ok: false, reason: 'no_secret', message: `${headerName} does not match` };
}
