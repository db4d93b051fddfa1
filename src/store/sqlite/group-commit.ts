// Group commit for the webhook gateway's writes: every write asked for while the event loop is in
// one turn (the deliveries that arrived together) runs in one SQLite transaction, committed once,
// and each caller's promise settles only after that commit, so a delivery is acknowledged only once
// its write is durable. One commit per burst instead of one per write: the WAL is appended and
// synced once, the write lock taken once.
//
// Each write runs in its own savepoint inside the transaction, so one that throws (a full queue)
// is undone alone and fails alone; a transaction that cannot commit fails every write in it.
import type { Database } from 'better-sqlite3';

/** Writes per transaction at most: a burst larger than this is committed in several. */
const MAX_BATCH = 512;

interface Pending {
  write: () => unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

export interface GroupCommit {
  /** Runs `write` in the next group's transaction; settles once that transaction committed. */
  run<T>(write: () => T): Promise<T>;
  /** Commits what is waiting now (before the database closes). */
  flush(): void;
}

export function groupCommit(db: Database): GroupCommit {
  let pending: Pending[] = [];
  let scheduled: NodeJS.Immediate | null = null;

  const step = db.transaction((write: () => unknown) => write());
  const commitAll = db.transaction((batch: Pending[]): Outcome[] =>
    batch.map((item): Outcome => {
      try {
        // Nested in the group's transaction, a better-sqlite3 transaction is a savepoint.
        return { ok: true, value: step(item.write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );

  const flush = () => {
    if (scheduled !== null) clearImmediate(scheduled);
    scheduled = null;
    while (pending.length > 0) {
      const batch = pending.slice(0, MAX_BATCH);
      pending = pending.slice(batch.length);
      let outcomes: Outcome[];
      try {
        // IMMEDIATE takes the write lock first, so every read inside sees the state it writes to.
        outcomes = commitAll.immediate(batch);
      } catch (err) {
        for (const item of batch) item.reject(err);
        continue;
      }
      batch.forEach((item, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) item.resolve(outcome.value);
        else item.reject(outcome.error);
      });
    }
  };

  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
        // After the I/O callbacks of this turn: every delivery read in it joins the group.
        scheduled ??= setImmediate(flush);
      });
    },
    flush,
  };
}
