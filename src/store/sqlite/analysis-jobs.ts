// Analysis jobs in SQLite: one row per call, keyed by callSid. A claim sets a lease with a fresh
// token (the receipt); a lapsed lease (crashed consumer) makes the row claimable again, and a
// retry from the consumer that lost it is ignored.
import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { AnalysisJob, AnalysisJobs, ClaimedAnalysisJob, Clock } from '../store.js';
import type { Migration } from './migrations.js';

export const analysisJobMigrations: readonly Migration[] = [
  {
    id: 'analysis-jobs-1',
    sql: `CREATE TABLE analysis_jobs (
            call_sid TEXT PRIMARY KEY,
            language TEXT NOT NULL,
            text TEXT NOT NULL,
            truncated INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            enqueued_at INTEGER NOT NULL,
            due_at INTEGER NOT NULL,
            lease_token TEXT,
            lease_until INTEGER,
            last_error TEXT
          );
          CREATE INDEX analysis_jobs_due ON analysis_jobs (due_at, enqueued_at);`,
  },
];

interface Row {
  call_sid: string;
  language: string;
  text: string;
  truncated: number;
  attempts: number;
  enqueued_at: number;
  last_error: string | null;
  lease_token: string | null;
}

function toJob(row: Row): AnalysisJob {
  return {
    callSid: row.call_sid,
    language: row.language,
    text: row.text,
    truncated: row.truncated === 1,
    attempts: row.attempts,
    enqueuedAtMs: row.enqueued_at,
    lastError: row.last_error,
  };
}

export function sqliteAnalysisJobs(db: Database, now: Clock): AnalysisJobs {
  const exists = db.prepare<[string], { n: number }>('SELECT 1 AS n FROM analysis_jobs WHERE call_sid = ?');
  const count = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM analysis_jobs');
  const insert = db.prepare<{
    callSid: string;
    language: string;
    text: string;
    truncated: number;
    now: number;
  }>(
    `INSERT INTO analysis_jobs (call_sid, language, text, truncated, enqueued_at, due_at)
     VALUES (@callSid, @language, @text, @truncated, @now, @now)`,
  );
  // A leased row is due again once its lease lapses: due_at is moved to the lease end on claim.
  const nextDue = db.prepare<{ now: number }, { call_sid: string }>(
    'SELECT call_sid FROM analysis_jobs WHERE due_at <= @now ORDER BY due_at, enqueued_at LIMIT 1',
  );
  const lease = db.prepare<{ callSid: string; token: string; until: number }, Row>(
    `UPDATE analysis_jobs SET attempts = attempts + 1, lease_token = @token, lease_until = @until, due_at = @until
     WHERE call_sid = @callSid RETURNING *`,
  );
  const remove = db.prepare<[string]>('DELETE FROM analysis_jobs WHERE call_sid = ?');
  const later = db.prepare<{ callSid: string; token: string; dueAt: number; error: string }>(
    `UPDATE analysis_jobs SET due_at = @dueAt, lease_token = NULL, lease_until = NULL, last_error = @error
     WHERE call_sid = @callSid AND lease_token = @token`,
  );

  // IMMEDIATE: the checks and the write are one step even with another process on the file.
  const enqueueTx = db.transaction(
    (job: Parameters<AnalysisJobs['enqueueAnalysisJob']>[0], maxQueued: number) => {
      if (exists.get(job.callSid)) return 'duplicate' as const;
      if ((count.get()?.n ?? 0) >= maxQueued) return 'full' as const;
      insert.run({
        callSid: job.callSid,
        language: job.language,
        text: job.text,
        truncated: job.truncated ? 1 : 0,
        now: now(),
      });
      return 'queued' as const;
    },
  );
  const claimTx = db.transaction((leaseMs: number): ClaimedAnalysisJob | null => {
    const t = now();
    const due = nextDue.get({ now: t });
    if (!due) return null;
    const token = randomUUID();
    const row = lease.get({ callSid: due.call_sid, token, until: t + leaseMs });
    return row ? { ...toJob(row), receipt: token } : null;
  });

  return {
    async enqueueAnalysisJob(job, maxQueued) {
      return enqueueTx.immediate(job, maxQueued);
    },
    async claimAnalysisJob(_consumer, leaseMs) {
      return claimTx.immediate(leaseMs);
    },
    async completeAnalysisJob(job) {
      remove.run(job.callSid);
    },
    async retryAnalysisJobLater(job, delayMs, error) {
      later.run({ callSid: job.callSid, token: job.receipt, dueAt: now() + delayMs, error });
    },
    async analysisJobCount() {
      return count.get()?.n ?? 0;
    },
  };
}
