// The embedded store: one SQLite file, `${dataDir}/callbridge.db`, in WAL mode. Durable across
// restarts of one instance; several instances share state through the Redis adapter instead.
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { accessMigrations, sqliteAccess } from './sqlite/access.js';
import { analysisJobMigrations, sqliteAnalysisJobs } from './sqlite/analysis-jobs.js';
import { callRecordMigrations, sqliteCallRecords } from './sqlite/call-records.js';
import { campaignMigrations, sqliteCampaigns } from './sqlite/campaigns.js';
import { dialerHeartbeatMigrations, sqliteDialerHeartbeats } from './sqlite/dialer-heartbeats.js';
import { doNotCallMigrations, sqliteDoNotCall } from './sqlite/do-not-call.js';
import { DEFAULT_CALL_RECORD_RETENTION_MS } from './call-record-query.js';
import { eventQueueMigrations, sqliteEventQueue } from './sqlite/event-queue.js';
import { groupCommit } from './sqlite/group-commit.js';
import { idempotencyMigrations, sqliteIdempotencyKeys } from './sqlite/idempotency.js';
import { applyMigrations } from './sqlite/migrations.js';
import { onceClaimMigrations, sqliteOnceClaims } from './sqlite/once-claims.js';
import { outboundContextMigrations, sqliteOutboundContexts } from './sqlite/outbound-contexts.js';
import {
  providerVerificationMigrations,
  sqliteProviderVerifications,
} from './sqlite/provider-verifications.js';
import { sqliteWindowCounters, windowCounterMigrations } from './sqlite/window-counters.js';
import { type StoreLimits, storeLimits } from './limits.js';
import type { Clock, Store } from './store.js';
import { ensurePrivateDir, ensurePrivateFile, tightenExisting } from './private-files.js';

export const SQLITE_FILE_NAME = 'callbridge.db';

/** Expired keys, claims and counters are deleted this often (they are ignored once expired anyway). */
const PRUNE_INTERVAL_MS = 10 * 60_000;

export interface SqliteStoreOptions {
  /** The database file; its folder is created if missing. */
  file: string;
  now?: Clock;
  /** How long call records are kept, counted from their start; 90 days by default. */
  callRecordRetentionMs?: number;
  limits?: Partial<StoreLimits>;
}

export function openSqliteStore(options: SqliteStoreOptions): Store {
  const now = options.now ?? Date.now;
  const limits = storeLimits(options.limits);
  // Created 0600 before SQLite opens it: its journal files take the database's mode.
  const files = ensurePrivateFile(options.file, ensurePrivateDir(dirname(options.file)));
  tightenExisting([`${options.file}-wal`, `${options.file}-shm`, `${options.file}-journal`], files);
  const db = new Database(options.file);
  db.pragma('journal_mode = WAL');
  // NORMAL is durable across process crashes in WAL mode (only an OS crash may lose the last commits).
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');

  applyMigrations(db, [
    ...onceClaimMigrations,
    ...outboundContextMigrations,
    ...idempotencyMigrations,
    ...windowCounterMigrations,
    ...eventQueueMigrations,
    ...providerVerificationMigrations,
    ...callRecordMigrations,
    ...analysisJobMigrations,
    ...campaignMigrations,
    ...dialerHeartbeatMigrations,
    ...doNotCallMigrations,
    ...accessMigrations,
  ]);

  const onceClaims = sqliteOnceClaims(db, now, limits.clockSkewAllowanceMs);
  const { prune: pruneContexts, ...outboundContexts } = sqliteOutboundContexts(db, now);
  // The webhook gateway's writes (keys, queue, verification times): one transaction per burst.
  const gatewayWrites = groupCommit(db);
  const idempotency = sqliteIdempotencyKeys(db, now, gatewayWrites);
  const counters = sqliteWindowCounters(db, now);
  const { prune: pruneCampaigns, ...campaigns } = sqliteCampaigns(db, now);
  const { prune: pruneHeartbeats, ...heartbeats } = sqliteDialerHeartbeats(db, now);
  const { prune: pruneSessions, ...access } = sqliteAccess(db, now);
  const prune = () => {
    pruneSessions();
    onceClaims.prune();
    pruneContexts();
    idempotency.prune();
    counters.prune();
    pruneCampaigns();
    pruneHeartbeats();
  };
  prune();
  const pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
  pruneTimer.unref();

  return {
    claimOnce: onceClaims.claimOnce,
    ...outboundContexts,
    claimIdempotencyKey: idempotency.claimIdempotencyKey,
    commitIdempotencyKey: idempotency.commitIdempotencyKey,
    releaseIdempotencyKey: idempotency.releaseIdempotencyKey,
    incrementWindowCounter: counters.incrementWindowCounter,
    readWindowCounter: counters.readWindowCounter,
    ...sqliteEventQueue(db, now, limits, gatewayWrites),
    ...sqliteProviderVerifications(db, gatewayWrites),
    ...sqliteCallRecords(db, now, options.callRecordRetentionMs ?? DEFAULT_CALL_RECORD_RETENTION_MS),
    ...sqliteAnalysisJobs(db, now),
    ...campaigns,
    ...heartbeats,
    ...sqliteDoNotCall(db),
    ...access,
    async close() {
      clearInterval(pruneTimer);
      if (db.open) gatewayWrites.flush();
      if (db.open) db.close();
    },
  };
}
