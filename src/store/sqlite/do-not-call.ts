// The do-not-call list in SQLite: one row per E.164 number.
import type { Database } from 'better-sqlite3';
import type { DoNotCallList } from '../campaign-store.js';
import type { Migration } from './migrations.js';

export const doNotCallMigrations: readonly Migration[] = [
  {
    id: 'do-not-call-1',
    sql: 'CREATE TABLE do_not_call (number TEXT PRIMARY KEY, added_at INTEGER NOT NULL)',
  },
];

export function sqliteDoNotCall(db: Database): DoNotCallList {
  const insert = db.prepare('INSERT OR IGNORE INTO do_not_call (number, added_at) VALUES (?, ?)');
  const get = db.prepare<[string], { number: string; added_at: number }>(
    'SELECT number, added_at FROM do_not_call WHERE number = ?',
  );
  const remove = db.prepare('DELETE FROM do_not_call WHERE number = ?');
  const page = db.prepare<[string, string, number], { number: string; added_at: number }>(
    `SELECT number, added_at FROM do_not_call WHERE number > ? AND instr(number, ?) > 0
     ORDER BY number LIMIT ?`,
  );
  const addAll = db.transaction((numbers: readonly string[], nowMs: number) => {
    let added = 0;
    for (const number of numbers) added += insert.run(number, nowMs).changes;
    return added;
  });
  return {
    async addDoNotCall(numbers, nowMs) {
      return addAll(numbers, nowMs);
    },
    async getDoNotCall(number) {
      const row = get.get(number);
      return row ? { number: row.number, addedAtMs: row.added_at } : null;
    },
    async removeDoNotCall(number) {
      return remove.run(number).changes === 1;
    },
    async listDoNotCall(query) {
      const rows = page.all(query.cursor ?? '', query.q ?? '', query.limit + 1);
      const numbers = rows
        .slice(0, query.limit)
        .map((row) => ({ number: row.number, addedAtMs: row.added_at }));
      return { numbers, nextCursor: rows.length > query.limit ? numbers.at(-1)!.number : null };
    },
  };
}
