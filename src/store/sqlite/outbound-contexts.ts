// Outbound calls' contexts in SQLite: read only while unexpired, pruned with the other expiring rows.
import type { Database } from 'better-sqlite3';
import type { Clock, OutboundContextRecords } from '../store.js';
import type { Migration } from './migrations.js';

export const outboundContextMigrations: readonly Migration[] = [
  {
    id: 'outbound-contexts-1',
    sql: 'CREATE TABLE outbound_contexts (id TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL)',
  },
];

export function sqliteOutboundContexts(db: Database, now: Clock): OutboundContextRecords & { prune(): void } {
  const put = db.prepare<{ id: string; value: string; expiresAt: number }>(
    `INSERT INTO outbound_contexts (id, value, expires_at) VALUES (@id, @value, @expiresAt)
     ON CONFLICT (id) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
  );
  const get = db.prepare<[string, number], { value: string }>(
    'SELECT value FROM outbound_contexts WHERE id = ? AND expires_at > ?',
  );
  const prune = db.prepare<[number]>('DELETE FROM outbound_contexts WHERE expires_at <= ?');

  return {
    async putOutboundContext(id, value, ttlMs) {
      put.run({ id, value, expiresAt: now() + ttlMs });
    },
    async getOutboundContext(id) {
      return get.get(id, now())?.value ?? null;
    },
    prune() {
      prune.run(now());
    },
  };
}
