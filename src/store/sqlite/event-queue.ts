// The shared event queue in SQLite: one row per event; a lease marks it in flight, `dead_at` marks
// a dead letter. A lapsed lease (crashed consumer) makes the row claimable again. Bounded like the
// Redis queue (limits.ts): enqueueing past the limit is refused, and dead letters are kept for a
// retention and up to a count.
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { QueueFullError } from '../../errors.js';
import type { StoreLimits } from '../limits.js';
import type { ClaimedEvent, Clock, DeadLetter, EventQueue, QueuedEvent } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import type { Migration } from './migrations.js';

export const eventQueueMigrations: readonly Migration[] = [
  {
    id: 'event-queue-1',
    sql: `CREATE TABLE event_queue (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            provider TEXT NOT NULL,
            idempotency_key TEXT NOT NULL,
            payload TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            enqueued_at INTEGER NOT NULL,
            due_at INTEGER NOT NULL,
            lease_owner TEXT,
            lease_until INTEGER,
            last_error TEXT,
            dead_at INTEGER
          );
          CREATE INDEX event_queue_due ON event_queue (dead_at, due_at, seq);`,
  },
];

interface Row {
  id: string;
  name: string;
  provider: string;
  idempotency_key: string;
  payload: string;
  attempts: number;
  enqueued_at: number;
  last_error: string | null;
  dead_at: number | null;
}

function toEvent(row: Row): QueuedEvent {
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    idempotencyKey: row.idempotency_key,
    payload: JSON.parse(row.payload),
    attempts: row.attempts,
    enqueuedAtMs: row.enqueued_at,
    lastError: row.last_error,
  };
}

export function sqliteEventQueue(
  db: Database,
  now: Clock,
  limits: StoreLimits,
  group: GroupCommit,
): EventQueue {
  const insert = db.prepare(
    `INSERT INTO event_queue (id, name, provider, idempotency_key, payload, enqueued_at, due_at)
     VALUES (@id, @name, @provider, @idempotencyKey, @payload, @now, @now)`,
  );
  const nextDue = db.prepare<{ now: number }, Row>(
    `SELECT * FROM event_queue
     WHERE dead_at IS NULL AND due_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
     ORDER BY due_at, seq LIMIT 1`,
  );
  const lease = db.prepare<{ id: string; owner: string; until: number }, Row>(
    `UPDATE event_queue SET attempts = attempts + 1, lease_owner = @owner, lease_until = @until
     WHERE id = @id RETURNING *`,
  );
  const remove = db.prepare<[string]>('DELETE FROM event_queue WHERE id = ?');
  const later = db.prepare<{ id: string; dueAt: number; error: string }>(
    `UPDATE event_queue SET due_at = @dueAt, lease_owner = NULL, lease_until = NULL, last_error = @error
     WHERE id = @id AND dead_at IS NULL`,
  );
  const bury = db.prepare<{ id: string; now: number; error: string }>(
    `UPDATE event_queue SET dead_at = @now, lease_owner = NULL, lease_until = NULL, last_error = @error
     WHERE id = @id AND dead_at IS NULL`,
  );
  const trimDead = db.prepare<{ cutoff: number; max: number }>(
    `DELETE FROM event_queue WHERE dead_at IS NOT NULL AND (dead_at < @cutoff OR seq NOT IN (
       SELECT seq FROM event_queue WHERE dead_at IS NOT NULL ORDER BY dead_at DESC, seq DESC LIMIT @max))`,
  );
  const deadLetters = db.prepare<{ cutoff: number; limit: number }, Row>(
    `SELECT * FROM event_queue WHERE dead_at IS NOT NULL AND dead_at >= @cutoff
     ORDER BY dead_at DESC, seq DESC LIMIT @limit`,
  );
  const deadLetter = db.prepare<[string], { id: string }>(
    'SELECT id FROM event_queue WHERE id = ? AND dead_at IS NOT NULL',
  );
  const revive = db.prepare<{ id: string; now: number }>(
    `UPDATE event_queue SET dead_at = NULL, attempts = 0, enqueued_at = @now, due_at = @now
     WHERE id = @id AND dead_at IS NOT NULL`,
  );
  const live = db.prepare<[], { depth: number; oldest: number | null }>(
    'SELECT COUNT(*) AS depth, MIN(enqueued_at) AS oldest FROM event_queue WHERE dead_at IS NULL',
  );
  const dead = db.prepare<[number], { n: number }>(
    'SELECT COUNT(*) AS n FROM event_queue WHERE dead_at IS NOT NULL AND dead_at >= ?',
  );
  const queued = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM event_queue WHERE dead_at IS NULL');

  const queueFull = () =>
    new QueueFullError(`the event queue holds its limit of ${limits.maxQueuedEvents} events; retry later`);
  const hasRoom = () => (queued.get()?.n ?? 0) < limits.maxQueuedEvents;
  const cutoff = () => now() - limits.deadLetterRetentionMs;

  // Run in the gateway's group commit (its IMMEDIATE transaction): the count and the insert are one step.
  const enqueueRow = (row: Parameters<typeof insert.run>[0]) => {
    if (!hasRoom()) throw queueFull();
    insert.run(row);
  };
  const buryTx = db.transaction((id: string, error: string) => {
    bury.run({ id, now: now(), error });
    trimDead.run({ cutoff: cutoff(), max: limits.maxDeadLetters });
  });
  const reviveTx = db.transaction((id: string) => {
    if (!hasRoom()) {
      if (deadLetter.get(id)) throw queueFull();
      return false;
    }
    return revive.run({ id, now: now() }).changes === 1;
  });

  // IMMEDIATE: the select and the lease are one step even with another process on the file.
  const claimTx = db.transaction((consumer: string, leaseMs: number): ClaimedEvent | null => {
    const t = now();
    const row = nextDue.get({ now: t });
    if (!row) return null;
    const leased = lease.get({ id: row.id, owner: consumer, until: t + leaseMs });
    if (!leased) return null;
    return { ...toEvent(leased), receipt: leased.id };
  });

  return {
    async enqueueEvent(event) {
      const id = randomUUID();
      const payload = JSON.stringify(event.payload ?? null);
      await group.run(() =>
        enqueueRow({
          id,
          name: event.name,
          provider: event.provider,
          idempotencyKey: event.idempotencyKey,
          payload,
          now: now(),
        }),
      );
      return id;
    },
    async claimNextEvent(consumer, leaseMs) {
      return claimTx.immediate(consumer, leaseMs);
    },
    async ackEvent(event) {
      remove.run(event.receipt);
    },
    async retryEventLater(event, delayMs, error) {
      later.run({ id: event.receipt, dueAt: now() + delayMs, error });
    },
    async deadLetterEvent(event, error) {
      buryTx.immediate(event.receipt, error);
    },
    async listDeadLetters(limit) {
      return deadLetters
        .all({ cutoff: cutoff(), limit })
        .map((row): DeadLetter => ({ ...toEvent(row), deadAtMs: row.dead_at ?? 0 }));
    },
    async retryDeadLetter(id) {
      return reviveTx.immediate(id);
    },
    async queueStats() {
      const { depth, oldest } = live.get() ?? { depth: 0, oldest: null };
      return {
        depth,
        oldestAgeMs: oldest === null ? null : Math.max(0, now() - oldest),
        deadLetters: dead.get(cutoff())?.n ?? 0,
      };
    },
  };
}
