// API keys, console sessions and the audit log in SQLite (src/store/access.ts). Expired sessions
// are never read and are deleted by the store's pruning.
import type { Database } from 'better-sqlite3';
import { BadRequestError } from '../../errors.js';
import type {
  AccessStore,
  ApiKeyRecord,
  AuditEntry,
  AuditEntryInput,
  Role,
  SessionRecord,
} from '../access.js';
import type { Clock } from '../store.js';
import type { Migration } from './migrations.js';

export const accessMigrations: readonly Migration[] = [
  {
    id: 'access-1',
    sql: `CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            role TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            created_at INTEGER NOT NULL
          );
          CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            key_id TEXT,
            name TEXT NOT NULL,
            role TEXT NOT NULL,
            csrf TEXT NOT NULL,
            expires_at INTEGER NOT NULL
          );
          CREATE INDEX sessions_key ON sessions (key_id);
          CREATE TABLE audit_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at INTEGER NOT NULL,
            key_name TEXT NOT NULL,
            role TEXT NOT NULL,
            action TEXT NOT NULL,
            target TEXT NOT NULL,
            detail TEXT
          );`,
  },
  {
    id: 'access-2',
    sql: `ALTER TABLE sessions ADD COLUMN token_fingerprint TEXT;
          ALTER TABLE audit_log ADD COLUMN key_id TEXT;`,
  },
];

interface KeyRow {
  id: string;
  name: string;
  role: string;
  secret_hash: string;
  created_at: number;
}

interface SessionRow {
  id: string;
  key_id: string | null;
  name: string;
  role: string;
  csrf: string;
  expires_at: number;
  token_fingerprint: string | null;
}

interface AuditRow {
  id: number;
  at: number;
  key_id: string | null;
  key_name: string;
  role: string;
  action: string;
  target: string;
  detail: string | null;
}

const keyOf = (row: KeyRow): ApiKeyRecord => ({
  id: row.id,
  name: row.name,
  role: row.role as Role,
  secretHash: row.secret_hash,
  createdAtMs: row.created_at,
});

function entryOf(row: AuditRow): AuditEntry {
  return {
    id: String(row.id),
    atMs: row.at,
    keyId: row.key_id,
    keyName: row.key_name,
    role: row.role as Role,
    action: row.action,
    target: row.target,
    ...(row.detail === null ? {} : { detail: JSON.parse(row.detail) as Record<string, unknown> }),
  };
}

function auditCursor(cursor: string | undefined): number {
  if (cursor === undefined) return Number.MAX_SAFE_INTEGER;
  if (!/^\d{1,15}$/.test(cursor)) throw new BadRequestError('cursor is not one a previous page handed out');
  return Number(cursor);
}

export function sqliteAccess(db: Database, now: Clock): AccessStore & { prune(): void } {
  const insertKey = db.prepare(
    `INSERT INTO api_keys (id, name, role, secret_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
  );
  const keyById = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
  const allKeys = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
  const removeKey = db.prepare('DELETE FROM api_keys WHERE id = ?');
  const removeKeySessions = db.prepare('DELETE FROM sessions WHERE key_id = ?');
  const insertSession = db.prepare(
    `INSERT OR REPLACE INTO sessions (id, key_id, name, role, csrf, expires_at, token_fingerprint)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const sessionById = db.prepare<[string, number], SessionRow>(
    'SELECT * FROM sessions WHERE id = ? AND expires_at > ?',
  );
  const removeSession = db.prepare('DELETE FROM sessions WHERE id = ?');
  const removeAllSessions = db.prepare('DELETE FROM sessions');
  const pruneSessions = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
  const insertAudit = db.prepare(
    `INSERT INTO audit_log (at, key_id, key_name, role, action, target, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const auditPage = db.prepare<[number, number], AuditRow>(
    'SELECT * FROM audit_log WHERE id < ? ORDER BY id DESC LIMIT ?',
  );
  // A key and its sessions go together: a deleted key signs nobody in a moment longer.
  const deleteKeyTx = db.transaction((id: string) => {
    removeKeySessions.run(id);
    return removeKey.run(id).changes === 1;
  });

  return {
    async saveApiKey(key) {
      insertKey.run(key.id, key.name, key.role, key.secretHash, key.createdAtMs);
    },
    async getApiKey(id) {
      const row = keyById.get(id);
      return row ? keyOf(row) : null;
    },
    async listApiKeys() {
      return allKeys.all().map(keyOf);
    },
    async deleteApiKey(id) {
      return deleteKeyTx(id);
    },
    async saveSession(s: SessionRecord) {
      insertSession.run(s.id, s.keyId, s.name, s.role, s.csrf, s.expiresAtMs, s.tokenFingerprint ?? null);
    },
    async getSession(id) {
      const row = sessionById.get(id, now());
      if (!row) return null;
      return {
        id: row.id,
        keyId: row.key_id,
        name: row.name,
        role: row.role as Role,
        csrf: row.csrf,
        expiresAtMs: row.expires_at,
        ...(row.token_fingerprint === null ? {} : { tokenFingerprint: row.token_fingerprint }),
      };
    },
    async deleteSession(id) {
      removeSession.run(id);
    },
    async deleteAllSessions() {
      removeAllSessions.run();
    },
    async appendAudit(entry: AuditEntryInput) {
      const detail = entry.detail === undefined ? null : JSON.stringify(entry.detail);
      const { lastInsertRowid } = insertAudit.run(
        entry.atMs,
        entry.keyId ?? null,
        entry.keyName,
        entry.role,
        entry.action,
        entry.target,
        detail,
      );
      return { ...entry, keyId: entry.keyId ?? null, id: String(lastInsertRowid) };
    },
    async listAudit(query) {
      const rows = auditPage.all(auditCursor(query.cursor), query.limit + 1);
      const page = rows.slice(0, query.limit);
      return {
        entries: page.map(entryOf),
        nextCursor: rows.length > query.limit ? String(page.at(-1)!.id) : null,
      };
    },
    prune() {
      pruneSessions.run(now());
    },
  };
}
