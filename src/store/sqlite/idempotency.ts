// Idempotency keys of webhook deliveries in SQLite: in progress (with an owner token) or done. Every
// write joins the gateway's group commit (group-commit.ts): the deliveries of one burst claim and
// commit their keys in one transaction.
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Clock, IdempotencyClaim, IdempotencyKeys } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { Migration } from './migrations.js';

export const idempotencyMigrations: readonly Migration[] = [
  {
    id: 'idempotency-keys-1',
    sql: `CREATE TABLE idempotency_keys (
            key TEXT PRIMARY KEY,
            state TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
            token TEXT,
            expires_at INTEGER NOT NULL
          );
          CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);`,
  },
];

export function sqliteIdempotencyKeys(
  db: Database,
  now: Clock,
  group: GroupCommit,
): IdempotencyKeys & { prune(): void } {
  const claim = db.prepare<{ key: string; token: string; expiresAt: number; now: number }>(
    `INSERT INTO idempotency_keys (key, state, token, expires_at) VALUES (@key, 'in_progress', @token, @expiresAt)
     ON CONFLICT (key) DO UPDATE SET state = 'in_progress', token = excluded.token, expires_at = excluded.expires_at
     WHERE idempotency_keys.expires_at <= @now`,
  );
  const stateOf = db.prepare<[string], { state: 'in_progress' | 'done' }>(
    'SELECT state FROM idempotency_keys WHERE key = ?',
  );
  // Commits its own claim, or a key whose claim lapsed meanwhile; never another live claimant's.
  const commit = db.prepare<{ key: string; token: string; expiresAt: number; now: number }>(
    `INSERT INTO idempotency_keys (key, state, token, expires_at) VALUES (@key, 'done', NULL, @expiresAt)
     ON CONFLICT (key) DO UPDATE SET state = 'done', token = NULL, expires_at = excluded.expires_at
     WHERE idempotency_keys.token = @token OR idempotency_keys.expires_at <= @now`,
  );
  const release = db.prepare<[string, string]>(
    `DELETE FROM idempotency_keys WHERE key = ? AND state = 'in_progress' AND token = ?`,
  );
  const prune = db.prepare<[number]>('DELETE FROM idempotency_keys WHERE expires_at <= ?');

  // Inside the group's IMMEDIATE transaction, so the insert and the read see one state.
  const claimKey = (key: string, ttlMs: number): IdempotencyClaim => {
    const t = now();
    const token = randomUUID();
    if (claim.run({ key, token, expiresAt: t + ttlMs, now: t }).changes === 1) {
      return { status: 'claimed', token };
    }
    return stateOf.get(key)?.state === 'done' ? { status: 'done' } : { status: 'in_progress' };
  };

  return {
    claimIdempotencyKey(key, ttlMs) {
      return group.run(() => claimKey(key, ttlMs));
    },
    async commitIdempotencyKey(key, token, ttlMs) {
      await group.run(() => {
        const t = now();
        commit.run({ key, token, expiresAt: t + ttlMs, now: t });
      });
    },
    async releaseIdempotencyKey(key, token) {
      await group.run(() => release.run(key, token));
    },
    prune() {
      prune.run(now());
    },
  };
}
