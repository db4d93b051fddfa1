// Stream tokens bind a media stream to the webhook that announced its call (docs/architecture.md,
// "Call intake"). A token is issued when a carrier's webhook is answered and travels in the media
// URL's path (`/media/<carrier>/<instance>/<token>`), which every carrier keeps, or in-band where the
// carrier offers a channel (Twilio `<Parameter>`). It is signed, bound to the carrier and its call
// id, short-lived, and single-use: the nonce is claimed in the shared store when a stream presents
// it. Its alphabet (`A-Z a-z 0-9 - _ .`) needs no escaping in a URL path.
import { createHmac, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../../auth.js';

export interface StreamGrant {
  carrier: string;
  callSid: string;
  /** The agent profile the called number routed to when the webhook was answered. */
  profile: string;
  from: string;
  to: string;
  direction: 'inbound' | 'outbound';
  /** Opaque outbound context (campaign, contact), carried to the call. */
  context?: string;
  /** The instance that answered the webhook and holds the call's pre-warmed agent. */
  instance: string;
  nonce: string;
  expiresAtMs: number;
}

export type TokenFailure =
  'missing' | 'malformed' | 'bad_signature' | 'expired' | 'wrong_carrier' | 'wrong_call';

export type TokenCheck = { ok: true; grant: StreamGrant } | { ok: false; reason: TokenFailure };

const VERSION = 'v1';
/** Longer than any token this code issues with a bounded context: anything past it is not ours. */
export const MAX_TOKEN_CHARS = 4096;
/** What a token may contain: a path segment, never needing escapes. */
export const TOKEN_ALPHABET = /^[A-Za-z0-9_.-]+$/;

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

function isGrant(value: unknown): value is StreamGrant {
  if (typeof value !== 'object' || value === null) return false;
  const g = value as Record<string, unknown>;
  const strings = ['carrier', 'callSid', 'profile', 'from', 'to', 'instance', 'nonce'];
  return (
    strings.every((key) => typeof g[key] === 'string') &&
    (g.direction === 'inbound' || g.direction === 'outbound') &&
    (g.context === undefined || typeof g.context === 'string') &&
    typeof g.expiresAtMs === 'number'
  );
}

/** Checks a token presented by a stream of `carrier` for its call `callSid`. */
export function checkStreamToken(
  secret: string,
  token: string | undefined,
  stream: { carrier: string; callSid: string },
  nowMs = Date.now(),
): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  if (token.length > MAX_TOKEN_CHARS || !TOKEN_ALPHABET.test(token))
    return { ok: false, reason: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== VERSION || !parts[1] || !parts[2]) {
    return { ok: false, reason: 'malformed' };
  }
  if (!constantTimeEqual(parts[2], sign(secret, `${VERSION}.${parts[1]}`))) {
    return { ok: false, reason: 'bad_signature' };
  }
  let grant: unknown;
  try {
    grant = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (!isGrant(grant)) return { ok: false, reason: 'malformed' };
  if (grant.expiresAtMs <= nowMs) return { ok: false, reason: 'expired' };
  if (grant.carrier !== stream.carrier) return { ok: false, reason: 'wrong_carrier' };
  if (grant.callSid !== stream.callSid) return { ok: false, reason: 'wrong_call' };
  return { ok: true, grant };
}
