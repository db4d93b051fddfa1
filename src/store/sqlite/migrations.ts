// Schema changes for the embedded store, applied once each and recorded by id. Every concern module
// lists its own migrations; add new ones at the end of a list, never edit an applied one.
import type { Database } from 'better-sqlite3';

export interface Migration {
  id: string;
  sql: string;
}

export function applyMigrations(db: Database, migrations: readonly Migration[]): void {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)');
  const isApplied = db.prepare<[string]>('SELECT 1 FROM schema_migrations WHERE id = ?');
  const record = db.prepare<[string, number]>('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)');
  for (const migration of migrations) {
    // IMMEDIATE: two processes opening one file at once must not both apply a migration.
    db.transaction(() => {
      if (isApplied.get(migration.id)) return;
      db.exec(migration.sql);
      record.run(migration.id, Date.now());
    }).immediate();
  }
}
