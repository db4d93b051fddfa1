// The credentials of the admin API (docs/console.md): API keys `cbk_<id>_<secret>` and session
// cookies. Only SHA-256 digests of their secrets are stored; both secrets are 256 random bits, so a
// plain digest is enough (no password stretching) and is compared in constant time.
import { createHash, randomBytes } from 'node:crypto';
import { constantTimeEqual } from '../auth.js';
import type { ApiKeyRecord, Role } from '../store/access.js';

const KEY_PATTERN = /^cbk_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** A new key: what is stored, and the key itself, shown to its creator once. */
export function newApiKey(name: string, role: Role, nowMs: number): { record: ApiKeyRecord; key: string } {
  const id = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return {
    record: { id, name, role, secretHash: sha256Hex(secret), createdAtMs: nowMs },
    key: `cbk_${id}_${secret}`,
  };
}

/** The id and secret of a key in our format, or null. */
export function parseApiKey(key: string): { id: string; secret: string } | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { id: match[1]!, secret: match[2]! } : null;
}

export function secretMatches(secret: string, record: ApiKeyRecord): boolean {
  return constantTimeEqual(sha256Hex(secret), record.secretHash);
}

/** A new random token (session cookie value, anti-forgery token). */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * What a session signed in with ADMIN_TOKEN keeps of it: a digest under a label of its own, so a
 * session made with one token is refused once the server runs with another (docs/security.md).
 */
export function adminTokenFingerprint(token: string): string {
  return sha256Hex(`callbridge admin token\n${token}`);
}
