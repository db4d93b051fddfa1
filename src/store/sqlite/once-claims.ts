// Single-use claims (stream tokens) in SQLite, standing for their validity plus the clock-skew
// allowance (limits.ts) like the Redis adapter's.
import type { Database } from 'better-sqlite3';
import type { Clock, OnceClaims } from '../store.js';
import type { Migration } from './migrations.js';

export const onceClaimMigrations: readonly Migration[] = [
  {
    id: 'once-claims-1',
    sql: 'CREATE TABLE once_claims (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)',
  },
];

export function sqliteOnceClaims(
  db: Database,
  now: Clock,
  clockSkewAllowanceMs: number,
): OnceClaims & { prune(): void } {
  // One statement: inserts a new claim or takes over a lapsed one, atomically.
  const claim = db.prepare<{ key: string; expiresAt: number; now: number }>(
    `INSERT INTO once_claims (key, expires_at) VALUES (@key, @expiresAt)
     ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE once_claims.expires_at <= @now`,
  );
  const prune = db.prepare<[number]>('DELETE FROM once_claims WHERE expires_at <= ?');

  return {
    async claimOnce(key, validForMs) {
      const t = now();
      return claim.run({ key, expiresAt: t + validForMs + clockSkewAllowanceMs, now: t }).changes === 1;
    },
    prune() {
      prune.run(now());
    },
  };
}
