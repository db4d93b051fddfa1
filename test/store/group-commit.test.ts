// The webhook gateway's group commit on a real SQLite file: the writes asked for in one turn share
// one transaction, each promise settles only once that transaction is committed (a second
// connection sees the row by then), a write that throws fails alone, and a commit that fails fails
// every write in it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { groupCommit } from '../../src/store/sqlite/group-commit.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

describe('sqlite group commit', () => {
  let dir: string;
  let db: Database.Database;
  let reader: Database.Database;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'callbridge-group-'));
    db = new Database(join(dir, 'test.db'));
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    reader = new Database(join(dir, 'test.db'), { readonly: true });
  });
  afterEach(() => {
    reader.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (k: string) => () => db.prepare('INSERT INTO t (k) VALUES (?)').run(k).changes;
  const seen = (k: string) => reader.prepare('SELECT k FROM t WHERE k = ?').get(k) !== undefined;

  it('runs the writes of one turn in one transaction and settles each only after the commit', async () => {
    const group = groupCommit(db);
    const seenByOthers: boolean[] = [];
    const first = group.run(insert('a'));
    const second = group.run(() => {
      // Inside the same transaction: the first write is made but not yet committed.
      seenByOthers.push(db.inTransaction, seen('a'));
      return insert('b')();
    });
    await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
    expect(seenByOthers).toEqual([true, false]);
    // Settled: both are committed, visible to another connection.
    expect(seen('a') && seen('b')).toBe(true);
  });

  it('fails a write that throws alone, undoing only what it did', async () => {
    const group = groupCommit(db);
    const results = await Promise.allSettled([
      group.run(insert('x')),
      group.run(() => {
        insert('half')();
        throw new Error('refused');
      }),
      group.run(insert('y')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect([seen('x'), seen('half'), seen('y')]).toEqual([true, false, true]);
  });

  it('fails every write of a transaction that cannot commit', async () => {
    const group = groupCommit(db);
    // Another connection holds the write lock past the busy timeout.
    const other = new Database(join(dir, 'test.db'), { timeout: 0 });
    db.pragma('busy_timeout = 0');
    other.prepare('BEGIN IMMEDIATE').run();
    try {
      const results = await Promise.allSettled([group.run(insert('p')), group.run(insert('q'))]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    } finally {
      other.prepare('ROLLBACK').run();
      other.close();
    }
    expect(seen('p') || seen('q')).toBe(false);
  });

  it('lets concurrent deliveries of one key claim it once, in one burst', async () => {
    const store = openSqliteStore({ file: join(dir, 'store.db') });
    try {
      const claims = await Promise.all(
        Array.from({ length: 5 }, () => store.claimIdempotencyKey('code:burst', 60_000)),
      );
      expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
      expect(claims.filter((c) => c.status === 'in_progress')).toHaveLength(4);
    } finally {
      await store.close();
    }
  });

  it('commits what is waiting when the store closes', async () => {
    const file = join(dir, 'closing.db');
    const store = openSqliteStore({ file });
    const marked = store.markProviderVerified('code', 1_000);
    await store.close();
    await marked;
    const after = openSqliteStore({ file });
    try {
      expect(await after.providerVerifiedTimes()).toEqual({ code: 1_000 });
    } finally {
      await after.close();
    }
  });
});
