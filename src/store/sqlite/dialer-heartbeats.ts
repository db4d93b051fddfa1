// Which dialer processes are alive, in SQLite: one row per process with the time its heartbeat lapses.
import type { Database } from 'better-sqlite3';
import type { DialerHeartbeats } from '../campaign-store.js';
import type { Clock } from '../store.js';
import type { Migration } from './migrations.js';

export const dialerHeartbeatMigrations: readonly Migration[] = [
  {
    id: 'dialer-heartbeats-1',
    sql: 'CREATE TABLE dialer_heartbeats (owner TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)',
  },
];

export function sqliteDialerHeartbeats(db: Database, now: Clock): DialerHeartbeats & { prune(): void } {
  const beat = db.prepare(
    `INSERT INTO dialer_heartbeats (owner, expires_at) VALUES (?, ?)
     ON CONFLICT (owner) DO UPDATE SET expires_at = excluded.expires_at`,
  );
  const live = db.prepare<[string, number], { owner: string }>(
    'SELECT owner FROM dialer_heartbeats WHERE owner IN (SELECT value FROM json_each(?)) AND expires_at > ?',
  );
  // Pruned a day after lapsing: a dialer on a clock ahead of ours must not lose its row early.
  const prune = db.prepare('DELETE FROM dialer_heartbeats WHERE expires_at <= ?');
  return {
    async beatDialer(owner, nowMs, ttlMs) {
      beat.run(owner, nowMs + ttlMs);
    },
    async liveDialers(owners, nowMs) {
      if (owners.length === 0) return new Set();
      return new Set(live.all(JSON.stringify(owners), nowMs).map((row) => row.owner));
    },
    prune() {
      prune.run(now() - 24 * 60 * 60_000);
    },
  };
}
