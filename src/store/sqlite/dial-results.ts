// The breaker's window in SQLite: each finished dial's time and whether it failed, trimmed to the
// window as results arrive.
import type { Database } from 'better-sqlite3';
import type { DialResults } from '../campaign-store.js';

export function sqliteDialResults(db: Database): DialResults {
  const q = {
    insertResult: db.prepare(
      'INSERT OR IGNORE INTO dial_results (campaign_id, id, at, failed) VALUES (?, ?, ?, ?)',
    ),
    trimResults: db.prepare('DELETE FROM dial_results WHERE campaign_id = ? AND at < ?'),
    resultCounts: db.prepare<[string, number], { calls: number; failures: number | null }>(
      'SELECT COUNT(*) AS calls, SUM(failed) AS failures FROM dial_results WHERE campaign_id = ? AND at >= ?',
    ),
  };

  const recordResult = db.transaction(
    (campaignId: string, result: { id: string; atMs: number; failed: boolean }, keepMs: number) => {
      q.insertResult.run(campaignId, result.id, result.atMs, result.failed ? 1 : 0);
      q.trimResults.run(campaignId, result.atMs - keepMs);
    },
  );

  return {
    async recordDialResult(campaignId, result, keepMs) {
      recordResult.immediate(campaignId, result, keepMs);
    },
    async dialResultCounts(campaignId, sinceMs) {
      const row = q.resultCounts.get(campaignId, sinceMs)!;
      return { calls: row.calls, failures: row.failures ?? 0 };
    },
  };
}
