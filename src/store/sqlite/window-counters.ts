// Counters over a window opened by the first hit, in SQLite (the auth-failure limiter).
import type { Database } from 'better-sqlite3';
import type { Clock, WindowCount, WindowCounters } from '../store.js';
import type { Migration } from './migrations.js';

export const windowCounterMigrations: readonly Migration[] = [
  {
    id: 'window-counters-1',
    sql: 'CREATE TABLE window_counters (key TEXT PRIMARY KEY, count INTEGER NOT NULL, reset_at INTEGER NOT NULL)',
  },
];

interface Row {
  count: number;
  reset_at: number;
}

export function sqliteWindowCounters(db: Database, now: Clock): WindowCounters & { prune(): void } {
  // A lapsed window restarts at 1 in the same statement, so concurrent hits never lose a count.
  const increment = db.prepare<{ key: string; resetAt: number; now: number }, Row>(
    `INSERT INTO window_counters (key, count, reset_at) VALUES (@key, 1, @resetAt)
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN reset_at <= @now THEN 1 ELSE count + 1 END,
       reset_at = CASE WHEN reset_at <= @now THEN excluded.reset_at ELSE reset_at END
     RETURNING count, reset_at`,
  );
  const read = db.prepare<[string, number], Row>(
    'SELECT count, reset_at FROM window_counters WHERE key = ? AND reset_at > ?',
  );
  const prune = db.prepare<[number]>('DELETE FROM window_counters WHERE reset_at <= ?');

  const toCount = (row: Row): WindowCount => ({ count: row.count, resetAtMs: row.reset_at });

  return {
    async incrementWindowCounter(key, windowMs) {
      const t = now();
      const row = increment.get({ key, resetAt: t + windowMs, now: t });
      if (!row) throw new Error('window counter upsert returned no row');
      return toCount(row);
    },
    async readWindowCounter(key) {
      const row = read.get(key, now());
      return row ? toCount(row) : null;
    },
    prune() {
      prune.run(now());
    },
  };
}
