// The two primitives every credential check uses: a constant-time comparison and the bearer
// token of an Authorization header. One copy, so no check compares secrets with `===` or trips on
// a header that arrives twice.
import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time equality of two secrets (strings as UTF-8). A length mismatch returns false after
 * the same work as a real comparison; lengths of digests and tokens are public anyway. Never throws.
 */
export function constantTimeEqual(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const left = typeof a === 'string' ? Buffer.from(a, 'utf8') : a;
  const right = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/**
 * The token of `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 section 2.1), or
 * null when the header is absent, repeated, of another scheme, or carries no single token.
 */
export function bearerToken(header: string | readonly string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  const match = /^Bearer +([^\s]+) *$/i.exec(header);
  return match ? match[1]! : null;
}
