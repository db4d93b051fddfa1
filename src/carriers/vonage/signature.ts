// Vonage's signed webhooks (docs/protocols/vonage.md): `Authorization: Bearer <JWT>`, HS256 with the
// account's signature secret, whose `payload_hash` claim is the hex SHA-256 of the raw body and
// whose `iat` says when it was signed. The JWT is verified with `jose`, the algorithm pinned.
import { createHash, timingSafeEqual } from 'node:crypto';
import { errors, type JWTPayload, jwtVerify } from 'jose';

export interface VonageSignatureOptions {
  /** Signature secrets, several during rotation. */
  secrets: readonly string[];
  /** When set, a token naming another application or account is refused. */
  applicationId: string | null;
  apiKey: string | null;
  /** How far `iat` may lie from now, either way. */
  toleranceMs: number;
  nowMs: number;
}

export type VonageSignatureFailure =
  'missing' | 'malformed' | 'bad_signature' | 'expired' | 'payload_mismatch' | 'wrong_application';

export type VonageSignatureCheck =
  { ok: true; claims: JWTPayload } | { ok: false; reason: VonageSignatureFailure };

export const SIGNATURE_TOLERANCE_MS = 300_000;

/** A JWT is three base64url parts; anything longer than this is not Vonage's. */
const MAX_TOKEN_CHARS = 4096;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const SHA256_HEX = /^[0-9a-f]{64}$/i;

function bearerToken(header: string | string[] | undefined): string | undefined {
  // A repeated header arrives as an array: Vonage sends one, so anything else is not Vonage.
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer +(\S+)$/i.exec(header.trim());
  return match?.[1];
}

/** Compares the claimed hash with the body's own, in constant time. */
function payloadMatches(claim: unknown, rawBody: Buffer): boolean {
  // A request with no body has nothing a hash could protect; Vonage may leave the claim out then.
  if (claim === undefined) return rawBody.length === 0;
  if (typeof claim !== 'string' || !SHA256_HEX.test(claim)) return false;
  const expected = createHash('sha256').update(rawBody).digest();
  return timingSafeEqual(Buffer.from(claim, 'hex'), expected);
}

async function verifyWithSecret(
  token: string,
  secret: string,
  nowMs: number,
): Promise<{ claims: JWTPayload } | VonageSignatureFailure> {
  try {
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ['HS256'],
      currentDate: new Date(nowMs),
    });
    return { claims: payload };
  } catch (err) {
    if (err instanceof errors.JWTExpired) return 'expired';
    if (err instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
    if (err instanceof errors.JOSEAlgNotAllowed) return 'bad_signature';
    return 'malformed';
  }
}

export async function verifyVonageSignature(
  authorization: string | string[] | undefined,
  rawBody: Buffer,
  opts: VonageSignatureOptions,
): Promise<VonageSignatureCheck> {
  const token = bearerToken(authorization);
  if (token === undefined) return { ok: false, reason: 'missing' };
  if (token.length > MAX_TOKEN_CHARS || !JWT_SHAPE.test(token)) return { ok: false, reason: 'malformed' };
  let claims: JWTPayload | undefined;
  let failure: VonageSignatureFailure = 'bad_signature';
  for (const secret of opts.secrets) {
    const result = await verifyWithSecret(token, secret, opts.nowMs);
    if (typeof result === 'object') {
      claims = result.claims;
      break;
    }
    // A signature that matched but is stale says more than one made with another secret.
    if (result !== 'bad_signature') failure = result;
  }
  if (claims === undefined) return { ok: false, reason: failure };
  // Replays are bounded by the signing time, since the same token is otherwise valid forever.
  if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat))
    return { ok: false, reason: 'malformed' };
  if (Math.abs(opts.nowMs - claims.iat * 1000) > opts.toleranceMs) return { ok: false, reason: 'expired' };
  if (!payloadMatches(claims.payload_hash, rawBody)) return { ok: false, reason: 'payload_mismatch' };
  if (opts.applicationId !== null && claims.application_id !== undefined) {
    if (claims.application_id !== opts.applicationId) return { ok: false, reason: 'wrong_application' };
  }
  if (opts.apiKey !== null && claims.api_key !== undefined && claims.api_key !== opts.apiKey) {
    return { ok: false, reason: 'wrong_application' };
  }
  return { ok: true, claims };
}
