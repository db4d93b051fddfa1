// HS256 JSON Web Tokens for the token grant (docs/protocols/speech-service.md section 2). Just enough
// of RFC 7519 to issue a short-lived token and check it at the handshake.
import { createHmac, randomUUID } from 'node:crypto';
import { constantTimeEqual } from '../../auth.js';

export interface JwtClaims {
  sub: string;
  /** Issued at, seconds since the epoch. */
  iat: number;
  /** Expiry, seconds since the epoch. */
  exp: number;
  jti: string;
}

export type JwtCheck = { ok: true; claims: JwtClaims } | { ok: false; reason: string };

const HEADER = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

export function signJwt(claims: JwtClaims, secret: string): string {
  const body = `${HEADER}.${base64url(JSON.stringify(claims))}`;
  return `${body}.${sign(body, secret)}`;
}

/** A token for `ttlSeconds` from `nowMs`. */
export function issueJwt(secret: string, ttlSeconds: number, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  return signJwt({ sub: 'callbridge-sim', iat, exp: iat + ttlSeconds, jti: randomUUID() }, secret);
}

/** Checks signature and expiry; the header must say HS256 (no `none`, no algorithm switching). */
export function verifyJwt(token: string, secret: string, nowMs = Date.now()): JwtCheck {
  const parts = token.split('.');
  if (parts.length !== 3) return { ok: false, reason: 'malformed token' };
  const [header, payload, signature] = parts as [string, string, string];
  if (header !== HEADER) {
    const parsed = parseJson(header);
    if (parsed?.alg !== 'HS256') return { ok: false, reason: 'unsupported token algorithm' };
  }
  if (!constantTimeEqual(sign(`${header}.${payload}`, secret), signature)) {
    return { ok: false, reason: 'bad token signature' };
  }
  const claims = parseJson(payload);
  if (!claims || typeof claims.exp !== 'number') return { ok: false, reason: 'token without expiry' };
  if (claims.exp * 1000 <= nowMs) return { ok: false, reason: 'token expired' };
  return { ok: true, claims: claims as unknown as JwtClaims };
}

function sign(data: string, secret: string): string {
  return createHmac('sha256', secret).update(data).digest('base64url');
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}

function parseJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
