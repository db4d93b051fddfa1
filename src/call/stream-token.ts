// Stream tokens bind a media stream to the voice webhook that announced it. The token travels
// as a TwiML <Parameter> (PROTOCOLS.md section 2: the stream URL may carry no query string) and
// comes back in `start.customParameters`. It is signed, bound to the CallSid, short-lived, and
// single-use: the nonce is claimed in the shared store when the stream presents it.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface StreamGrant {
  callSid: string;
  profile: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  nonce: string;
  expiresAtMs: number;
}

export type TokenCheck =
  | { ok: true; grant: StreamGrant }
  | { ok: false; reason: 'missing' | 'malformed' | 'bad_signature' | 'expired' | 'wrong_call' };

const VERSION = 'v1';

function sign(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('base64url');
}

export function issueStreamToken(
  secret: string,
  grant: Omit<StreamGrant, 'nonce' | 'expiresAtMs'>,
  ttlMs: number,
  nowMs = Date.now(),
): string {
  const full: StreamGrant = {
    ...grant,
    nonce: randomBytes(12).toString('base64url'),
    expiresAtMs: nowMs + ttlMs,
  };
  const body = Buffer.from(JSON.stringify(full)).toString('base64url');
  return `${VERSION}.${body}.${sign(secret, `${VERSION}.${body}`)}`;
}

export function checkStreamToken(
  secret: string,
  token: string | undefined,
  callSid: string,
  nowMs = Date.now(),
): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION || !parts[1] || !parts[2]) {
    return { ok: false, reason: 'malformed' };
  }
  const expected = Buffer.from(sign(secret, `${VERSION}.${parts[1]}`));
  const given = Buffer.from(parts[2]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return { ok: false, reason: 'bad_signature' };
  }
  let grant: StreamGrant;
  try {
    grant = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as StreamGrant;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof grant.expiresAtMs !== 'number' || grant.expiresAtMs <= nowMs)
    return { ok: false, reason: 'expired' };
  if (grant.callSid !== callSid) return { ok: false, reason: 'wrong_call' };
  return { ok: true, grant };
}
