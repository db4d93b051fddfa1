// Who may talk to the local agent (docs/protocols/speech-service.md section 2): `Authorization: Token <key>` or
// `Authorization: Bearer <JWT>`. The JWT is checked when presented, so a token that expires later
// does not end an open socket (docs/protocols/speech-service.md section 2).
import { constantTimeEqual } from '../../auth.js';
import { verifyJwt } from './jwt.js';

export interface AuthPolicy {
  /** Accepted API keys; empty means any non-empty key is accepted. */
  apiKeys: readonly string[];
  jwtSecret: string;
}

export type AuthResult = { ok: true; kind: 'key' | 'jwt' } | { ok: false; reason: string };

export function authorize(header: string | undefined, policy: AuthPolicy, nowMs = Date.now()): AuthResult {
  if (!header) return { ok: false, reason: 'missing Authorization header' };
  const match = /^(Token|Bearer)\s+(\S+)\s*$/i.exec(header);
  if (!match) return { ok: false, reason: 'Authorization must be "Token <key>" or "Bearer <jwt>"' };
  const scheme = match[1]!.toLowerCase();
  const credential = match[2]!;
  if (scheme === 'token') {
    if (policy.apiKeys.length > 0 && !policy.apiKeys.some((key) => constantTimeEqual(key, credential))) {
      return { ok: false, reason: 'invalid API key' };
    }
    return { ok: true, kind: 'key' };
  }
  const check = verifyJwt(credential, policy.jwtSecret, nowMs);
  return check.ok ? { ok: true, kind: 'jwt' } : { ok: false, reason: check.reason };
}
