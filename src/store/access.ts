// Who may use the admin API and what they did: API keys with a role, the sessions signed in with
// them, and the audit log of control actions (docs/console.md). One port, both adapters, one
// contract suite (test/store/access-contract.ts).

export { ROLES, type Role } from '../api/common.js';
import type { AuditEntry as ApiAuditEntry } from '../api/access.js';
import type { Role } from '../api/common.js';

/** An API key as stored: the secret itself never is, only its SHA-256. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  /** SHA-256 of the key's secret part, hex. */
  secretHash: string;
  createdAtMs: number;
}

/** A signed-in console, found by the SHA-256 of its cookie value. */
export interface SessionRecord {
  /** SHA-256 of the cookie value, hex. */
  id: string;
  /** The key it was signed in with; null for ADMIN_TOKEN, which is no stored key. */
  keyId: string | null;
  /**
   * For a session signed in with ADMIN_TOKEN: a fingerprint of that token (admin/credentials.ts),
   * so a session never outlives a rotated token. Null (or absent) for a stored key's session.
   */
  tokenFingerprint?: string | null;
  name: string;
  role: Role;
  /** The anti-forgery token the console sends back in `X-Callbridge-CSRF`. */
  csrf: string;
  expiresAtMs: number;
}

/**
 * An audit entry as stored: the API's (src/api/access.ts: keyName, role, action, target, detail)
 * with its moment in milliseconds.
 */
export type AuditEntryInput = Omit<ApiAuditEntry, 'id' | 'at'> & { atMs: number };

export interface AuditEntry extends AuditEntryInput {
  id: string;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

/** Entries kept by the Redis adapter (the oldest go first); SQLite keeps every entry. */
export const AUDIT_MAX_ENTRIES = 1_000_000;

export interface AccessStore {
  saveApiKey(key: ApiKeyRecord): Promise<void>;
  getApiKey(id: string): Promise<ApiKeyRecord | null>;
  /** Oldest first. */
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Deletes the key and every session signed in with it; false when there was no such key. */
  deleteApiKey(id: string): Promise<boolean>;

  saveSession(session: SessionRecord): Promise<void>;
  /** The session, or null when unknown or expired (by the store's clock). */
  getSession(id: string): Promise<SessionRecord | null>;
  deleteSession(id: string): Promise<void>;
  /** Ends every session (`DELETE /v1/sessions`). */
  deleteAllSessions(): Promise<void>;

  appendAudit(entry: AuditEntryInput): Promise<AuditEntry>;
  /**
   * Newest first. `nextCursor` resumes after the last entry handed out; null on the last page.
   * Throws BadRequestError for a cursor it did not issue.
   */
  listAudit(query: { limit: number; cursor?: string }): Promise<AuditPage>;
}
