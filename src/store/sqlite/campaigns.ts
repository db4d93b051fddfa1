// Campaigns, their contacts, the attempts in flight and the breaker's window, in SQLite. Each step
// is one transaction (IMMEDIATE where it reads before it writes, so two processes on one file
// serialise); records are JSON beside the columns queries filter and order on.
import type { Database } from 'better-sqlite3';
import type { CampaignRecord } from '../campaign-records.js';
import {
  CAMPAIGN_RETENTION_MS,
  type CampaignContacts,
  type Campaigns,
  type DialAttempts,
  type DialResults,
  STARTS_KEPT_MS,
} from '../campaign-store.js';
import { decodeCursor, encodeCursor } from '../campaign-transitions.js';
import type { Clock } from '../store.js';
import { sqliteCampaignContacts } from './campaign-contacts.js';
import { type CampaignRows, campaignRows } from './campaign-rows.js';
import { sqliteDialAttempts } from './dial-attempts.js';
import { sqliteDialResults } from './dial-results.js';

export { campaignMigrations } from './campaign-schema.js';

const CAMPAIGN_CURSOR = /^c\d{1,16}\|cmp_[a-z0-9]{1,40}$/;

export type SqliteCampaigns = Campaigns & CampaignContacts & DialAttempts & DialResults & { prune(): void };

export function sqliteCampaigns(db: Database, now: Clock): SqliteCampaigns {
  const rows = campaignRows(db);
  return {
    ...campaignTable(db, rows),
    ...sqliteCampaignContacts(db, rows),
    ...sqliteDialAttempts(db, rows),
    ...sqliteDialResults(db),
    ...campaignPruning(db, now),
  };
}

function campaignTable(db: Database, { readCampaign }: CampaignRows): Campaigns {
  const q = {
    insertCampaign: db.prepare(
      'INSERT INTO campaigns (id, created_at, state, ended_at, record) VALUES (@id, @createdAt, @state, @endedAt, @record)',
    ),
    updateCampaign: db.prepare(
      'UPDATE campaigns SET state = @state, ended_at = @endedAt, record = @record WHERE id = @id',
    ),
    listFirst: db.prepare<[number], { record: string; created_at: number; id: string }>(
      'SELECT record, created_at, id FROM campaigns ORDER BY created_at DESC, id DESC LIMIT ?',
    ),
    listAfter: db.prepare<
      [number, number, string, number],
      { record: string; created_at: number; id: string }
    >(
      `SELECT record, created_at, id FROM campaigns WHERE created_at <= ? AND (created_at, id) < (?, ?)
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    ),
    active: db.prepare<[], { id: string }>(
      `SELECT id FROM campaigns WHERE state IN ('running', 'paused')
       UNION SELECT DISTINCT campaign_id FROM dial_attempts`,
    ),
  };

  const transition = db.transaction(
    (id: string, from: readonly string[], to: CampaignRecord['state'], patch: Partial<CampaignRecord>) => {
      const found = readCampaign(id);
      if (!found || !from.includes(found.record.state)) return null;
      const record: CampaignRecord = { ...found.record, ...patch, state: to };
      q.updateCampaign.run({ id, state: to, endedAt: record.endedAtMs, record: JSON.stringify(record) });
      return record;
    },
  );

  return {
    async createCampaign(record) {
      q.insertCampaign.run({
        id: record.id,
        createdAt: record.createdAtMs,
        state: record.state,
        endedAt: record.endedAtMs,
        record: JSON.stringify(record),
      });
    },
    async getCampaign(id) {
      return readCampaign(id)?.record ?? null;
    },
    async listCampaigns({ limit, cursor }) {
      let rows;
      if (cursor === undefined) rows = q.listFirst.all(limit + 1);
      else {
        const text = decodeCursor(cursor, CAMPAIGN_CURSOR);
        const [at, id] = text.slice(1).split('|') as [string, string];
        rows = q.listAfter.all(Number(at), Number(at), id, limit + 1);
      }
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        campaigns: page.map((row) => JSON.parse(row.record) as CampaignRecord),
        nextCursor: rows.length > limit && last ? encodeCursor(`c${last.created_at}|${last.id}`) : null,
      };
    },
    async transitionCampaign(id, from, to, patch) {
      return transition.immediate(id, from, to, patch);
    },
    async activeCampaignIds() {
      return q.active.all().map((row) => row.id);
    },
    async settleCampaign() {
      // The active list is a query here: nothing to clear.
    },
  };
}

function campaignPruning(db: Database, now: Clock): { prune(): void } {
  const q = {
    pruneStarts: db.prepare('DELETE FROM dial_starts WHERE at < ?'),
    expired: db.prepare<[number], { id: string }>(
      `SELECT id FROM campaigns WHERE state IN ('completed', 'cancelled') AND ended_at < ?`,
    ),
  };
  const dropCampaign = db.prepare('DELETE FROM campaigns WHERE id = ?');
  const dropOf = [
    'campaign_contacts',
    'campaign_variables',
    'dial_attempts',
    'dial_starts',
    'dial_results',
  ].map((table) => db.prepare(`DELETE FROM ${table} WHERE campaign_id = ?`));

  const prune = db.transaction(() => {
    q.pruneStarts.run(now() - STARTS_KEPT_MS);
    for (const { id } of q.expired.all(now() - CAMPAIGN_RETENTION_MS)) {
      dropCampaign.run(id);
      for (const statement of dropOf) statement.run(id);
    }
  });

  return {
    prune() {
      prune.immediate();
    },
  };
}
