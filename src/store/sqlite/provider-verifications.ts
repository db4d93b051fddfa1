// Last verified delivery per webhook provider, in SQLite.
import type { Database } from 'better-sqlite3';
import type { ProviderVerifications } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { Migration } from './migrations.js';

export const providerVerificationMigrations: readonly Migration[] = [
  {
    id: 'provider-verifications-1',
    sql: 'CREATE TABLE provider_verifications (provider TEXT PRIMARY KEY, verified_at INTEGER NOT NULL)',
  },
];

export function sqliteProviderVerifications(db: Database, group: GroupCommit): ProviderVerifications {
  // Keeps the latest time: instances may report out of order.
  const mark = db.prepare<[string, number]>(
    `INSERT INTO provider_verifications (provider, verified_at) VALUES (?, ?)
     ON CONFLICT (provider) DO UPDATE SET verified_at = MAX(verified_at, excluded.verified_at)`,
  );
  const all = db.prepare<[], { provider: string; verified_at: number }>(
    'SELECT provider, verified_at FROM provider_verifications',
  );

  return {
    async markProviderVerified(provider, atMs) {
      // With the deliveries of the same burst: one commit for all of them.
      await group.run(() => mark.run(provider, atMs));
    },
    async providerVerifiedTimes() {
      return Object.fromEntries(all.all().map((row) => [row.provider, row.verified_at]));
    },
  };
}
