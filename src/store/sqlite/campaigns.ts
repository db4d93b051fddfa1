// Campaigns, their contacts, the attempts in flight and the breaker's window, in SQLite. Each step
// is one transaction (IMMEDIATE where it reads before it writes, so two processes on one file
// serialise); records are JSON beside the columns queries filter and order on.
import type { Database } from 'better-sqlite3';
import type { CampaignRecord, ContactRecord, ContactState, OpenAttempt } from '../campaign-records.js';
import {
  type AddContactsResult,
  type BeginResult,
  CAMPAIGN_RETENTION_MS,
  type CampaignContacts,
  type Campaigns,
  type DialAttempts,
  type DialResults,
  MAX_CONTACTS_PER_CAMPAIGN,
} from '../campaign-store.js';
import {
  beginOnContact,
  callSidOnContact,
  closeOnContact,
  decodeCursor,
  emptyTally,
  encodeCursor,
  finishOnContact,
  isWaiting,
  newContactRecord,
  readContact,
  seqCursor,
  seqFromCursor,
  ACCEPTS_CONTACTS,
  CANCELLED_NOTE,
} from '../campaign-transitions.js';
import { readPaceState, takePaceSlot, writePaceState } from '../pace.js';
import type { Clock } from '../store.js';
import type { Migration } from './migrations.js';

export const campaignMigrations: readonly Migration[] = [
  {
    id: 'campaigns-1',
    sql: `CREATE TABLE campaigns (
            id TEXT PRIMARY KEY,
            created_at INTEGER NOT NULL,
            state TEXT NOT NULL,
            ended_at INTEGER,
            next_seq INTEGER NOT NULL DEFAULT 1,
            bucket_tokens REAL,
            bucket_at INTEGER,
            record TEXT NOT NULL
          );
          CREATE INDEX campaigns_created ON campaigns (created_at, id);
          CREATE INDEX campaigns_state ON campaigns (state);
          CREATE TABLE campaign_contacts (
            campaign_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            phone_key TEXT,
            state TEXT NOT NULL,
            due_at INTEGER NOT NULL,
            lease_until INTEGER NOT NULL DEFAULT 0,
            outcome TEXT,
            record TEXT NOT NULL,
            PRIMARY KEY (campaign_id, seq)
          );
          CREATE UNIQUE INDEX campaign_contacts_phone ON campaign_contacts (campaign_id, phone_key);
          CREATE INDEX campaign_contacts_state ON campaign_contacts (campaign_id, state, seq);
          CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, due_at)
            WHERE state IN ('pending', 'retry');
          CREATE TABLE campaign_variables (
            campaign_id TEXT NOT NULL,
            name TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (campaign_id, name)
          );
          CREATE TABLE dial_attempts (
            id TEXT PRIMARY KEY,
            campaign_id TEXT NOT NULL,
            owner TEXT NOT NULL,
            call_sid TEXT,
            record TEXT NOT NULL
          );
          CREATE INDEX dial_attempts_campaign ON dial_attempts (campaign_id);
          CREATE INDEX dial_attempts_call ON dial_attempts (call_sid);
          CREATE TABLE dial_starts (campaign_id TEXT NOT NULL, at INTEGER NOT NULL, id TEXT NOT NULL);
          CREATE INDEX dial_starts_campaign ON dial_starts (campaign_id, at);
          CREATE TABLE dial_results (
            campaign_id TEXT NOT NULL,
            id TEXT NOT NULL,
            at INTEGER NOT NULL,
            failed INTEGER NOT NULL,
            PRIMARY KEY (campaign_id, id)
          );
          CREATE INDEX dial_results_at ON dial_results (campaign_id, at);`,
  },
  {
    // The pace's token bucket gave way to the rule in store/pace.ts, kept as one JSON text.
    id: 'campaigns-2',
    sql: `ALTER TABLE campaigns ADD COLUMN pace TEXT;
          ALTER TABLE campaigns DROP COLUMN bucket_tokens;
          ALTER TABLE campaigns DROP COLUMN bucket_at;`,
  },
];

/** Attempt starts are kept this long: enough for "pace achieved" over the last minutes. */
const STARTS_KEPT_MS = 10 * 60_000;
const CAMPAIGN_CURSOR = /^c\d{1,16}\|cmp_[a-z0-9]{1,40}$/;

interface CampaignRow {
  record: string;
  state: string;
  next_seq: number;
  pace: string | null;
}
interface ContactRow {
  record: string;
}

export type SqliteCampaigns = Campaigns & CampaignContacts & DialAttempts & DialResults & { prune(): void };

export function sqliteCampaigns(db: Database, now: Clock): SqliteCampaigns {
  const q = {
    insertCampaign: db.prepare(
      'INSERT INTO campaigns (id, created_at, state, ended_at, record) VALUES (@id, @createdAt, @state, @endedAt, @record)',
    ),
    campaign: db.prepare<[string], CampaignRow>(
      'SELECT record, state, next_seq, pace FROM campaigns WHERE id = ?',
    ),
    updateCampaign: db.prepare(
      'UPDATE campaigns SET state = @state, ended_at = @endedAt, record = @record WHERE id = @id',
    ),
    setNextSeq: db.prepare('UPDATE campaigns SET next_seq = ? WHERE id = ?'),
    setPace: db.prepare('UPDATE campaigns SET pace = ? WHERE id = ?'),
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

    phoneTaken: db.prepare<[string, string], { seq: number }>(
      'SELECT seq FROM campaign_contacts WHERE campaign_id = ? AND phone_key = ?',
    ),
    insertContact: db.prepare(
      `INSERT INTO campaign_contacts (campaign_id, seq, phone_key, state, due_at, outcome, record)
       VALUES (@campaignId, @seq, @phoneKey, @state, @dueAt, @outcome, @record)`,
    ),
    countVariable: db.prepare(
      `INSERT INTO campaign_variables (campaign_id, name, count) VALUES (?, ?, 1)
       ON CONFLICT (campaign_id, name) DO UPDATE SET count = count + 1`,
    ),
    contact: db.prepare<[string, number], ContactRow & { lease_until: number }>(
      'SELECT record, lease_until FROM campaign_contacts WHERE campaign_id = ? AND seq = ?',
    ),
    saveContact: db.prepare(
      `UPDATE campaign_contacts SET state = @state, due_at = @dueAt, outcome = @outcome, lease_until = @leaseUntil,
       record = @record WHERE campaign_id = @campaignId AND seq = @seq`,
    ),
    listAll: db.prepare<[string, number, number], ContactRow>(
      'SELECT record FROM campaign_contacts WHERE campaign_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    listState: db.prepare<[string, string, number, number], ContactRow>(
      'SELECT record FROM campaign_contacts WHERE campaign_id = ? AND state = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    tally: db.prepare<[string], { state: string; outcome: string | null; n: number }>(
      'SELECT state, outcome, COUNT(*) AS n FROM campaign_contacts WHERE campaign_id = ? GROUP BY state, outcome',
    ),
    variables: db.prepare<[string], { name: string; count: number }>(
      'SELECT name, count FROM campaign_variables WHERE campaign_id = ?',
    ),
    due: db.prepare<[string, number, number, number], ContactRow & { seq: number }>(
      `SELECT seq, record FROM campaign_contacts
       WHERE campaign_id = ? AND state IN ('pending', 'retry') AND due_at <= ? AND lease_until <= ?
       ORDER BY due_at, seq LIMIT ?`,
    ),
    lease: db.prepare('UPDATE campaign_contacts SET lease_until = ? WHERE campaign_id = ? AND seq = ?'),
    waiting: db.prepare<[string, number], { seq: number }>(
      `SELECT seq FROM campaign_contacts WHERE campaign_id = ? AND state IN ('pending', 'retry') LIMIT ?`,
    ),
    nextDue: db.prepare<[string], { due_at: number }>(
      `SELECT due_at FROM campaign_contacts WHERE campaign_id = ? AND state IN ('pending', 'retry')
       ORDER BY due_at LIMIT 1`,
    ),
    unfinished: db.prepare<[string], { one: number }>(
      `SELECT 1 AS one FROM campaign_contacts WHERE campaign_id = ? AND state IN ('pending', 'retry', 'dialing') LIMIT 1`,
    ),

    openCount: db.prepare<[string], { n: number }>(
      'SELECT COUNT(*) AS n FROM dial_attempts WHERE campaign_id = ?',
    ),
    insertAttempt: db.prepare(
      'INSERT INTO dial_attempts (id, campaign_id, owner, call_sid, record) VALUES (@id, @campaignId, @owner, NULL, @record)',
    ),
    attempt: db.prepare<[string, string], { record: string }>(
      'SELECT record FROM dial_attempts WHERE id = ? AND campaign_id = ?',
    ),
    attemptByCall: db.prepare<[string], { record: string }>(
      'SELECT record FROM dial_attempts WHERE call_sid = ? LIMIT 1',
    ),
    setCallSid: db.prepare('UPDATE dial_attempts SET call_sid = ?, record = ? WHERE id = ?'),
    deleteAttempt: db.prepare('DELETE FROM dial_attempts WHERE id = ?'),
    openOf: db.prepare<[string], { record: string }>(
      'SELECT record FROM dial_attempts WHERE campaign_id = ?',
    ),
    adopt: db.prepare(
      `UPDATE dial_attempts SET owner = @to, record = json_set(record, '$.owner', @to)
       WHERE id = @id AND campaign_id = @campaignId AND owner = @from`,
    ),
    insertStart: db.prepare('INSERT INTO dial_starts (campaign_id, at, id) VALUES (?, ?, ?)'),
    startsSince: db.prepare<[string, number], { n: number }>(
      'SELECT COUNT(*) AS n FROM dial_starts WHERE campaign_id = ? AND at >= ?',
    ),

    insertResult: db.prepare(
      'INSERT OR IGNORE INTO dial_results (campaign_id, id, at, failed) VALUES (?, ?, ?, ?)',
    ),
    trimResults: db.prepare('DELETE FROM dial_results WHERE campaign_id = ? AND at < ?'),
    resultCounts: db.prepare<[string, number], { calls: number; failures: number | null }>(
      'SELECT COUNT(*) AS calls, SUM(failed) AS failures FROM dial_results WHERE campaign_id = ? AND at >= ?',
    ),

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

  const readCampaign = (id: string) => {
    const row = q.campaign.get(id);
    return row ? { row, record: JSON.parse(row.record) as CampaignRecord } : null;
  };
  const readStoredContact = (campaignId: string, seq: number) => {
    const row = q.contact.get(campaignId, seq);
    return row ? readContact(row.record) : null;
  };
  const saveContact = (contact: ContactRecord, leaseUntil = 0) =>
    q.saveContact.run({
      campaignId: contact.campaignId,
      seq: contact.seq,
      state: contact.state,
      dueAt: contact.dueAtMs,
      outcome: contact.outcome,
      leaseUntil,
      record: JSON.stringify(contact),
    });

  const transition = db.transaction(
    (id: string, from: readonly string[], to: CampaignRecord['state'], patch: Partial<CampaignRecord>) => {
      const found = readCampaign(id);
      if (!found || !from.includes(found.record.state)) return null;
      const record: CampaignRecord = { ...found.record, ...patch, state: to };
      q.updateCampaign.run({ id, state: to, endedAt: record.endedAtMs, record: JSON.stringify(record) });
      return record;
    },
  );

  const add = db.transaction(
    (campaignId: string, contacts: Parameters<CampaignContacts['addContacts']>[1], nowMs: number) => {
      const found = readCampaign(campaignId);
      if (!found) return { ok: false, reason: 'not_found' } as const;
      if (!ACCEPTS_CONTACTS.includes(found.record.state)) return { ok: false, reason: 'ended' } as const;
      let seq = found.row.next_seq;
      const duplicates: number[] = [];
      const refused: number[] = [];
      for (const [index, contact] of contacts.entries()) {
        const phoneKey = contact.invalid === null ? contact.phone : null;
        if (phoneKey !== null && q.phoneTaken.get(campaignId, phoneKey)) {
          duplicates.push(index);
          continue;
        }
        if (seq > MAX_CONTACTS_PER_CAMPAIGN) {
          refused.push(index);
          continue;
        }
        const record = newContactRecord(campaignId, seq, contact, nowMs);
        q.insertContact.run({
          campaignId,
          seq,
          phoneKey,
          state: record.state,
          dueAt: record.dueAtMs,
          outcome: record.outcome,
          record: JSON.stringify(record),
        });
        if (contact.invalid === null) {
          for (const [name, value] of Object.entries(contact.variables)) {
            if (value.trim() !== '') q.countVariable.run(campaignId, name);
          }
        }
        seq += 1;
      }
      q.setNextSeq.run(seq, campaignId);
      const refusedReason = refused.length > 0 ? ('full' as const) : null;
      return { ok: true, added: seq - found.row.next_seq, duplicates, refused, refusedReason } as const;
    },
  );

  const lease = db.transaction((campaignId: string, nowMs: number, limit: number, leaseMs: number) => {
    const rows = q.due.all(campaignId, nowMs, nowMs, limit);
    for (const row of rows) q.lease.run(nowMs + leaseMs, campaignId, row.seq);
    return rows.map((row) => readContact(row.record));
  });

  const release = db.transaction((campaignId: string, seq: number, dueAtMs: number) => {
    const contact = readStoredContact(campaignId, seq);
    if (contact && isWaiting(contact.state)) saveContact({ ...contact, dueAtMs });
  });

  const close = db.transaction(
    (campaignId: string, seq: number, how: { outcome: 'dnc' | 'cancelled'; note: string | null }) => {
      const contact = readStoredContact(campaignId, seq);
      if (!contact || !isWaiting(contact.state)) return false;
      saveContact(closeOnContact(contact, how));
      return true;
    },
  );

  const cancelWaiting = db.transaction((campaignId: string, limit: number) => {
    const seqs = q.waiting.all(campaignId, limit).map((row) => row.seq);
    for (const seq of seqs) close(campaignId, seq, { outcome: 'cancelled', note: CANCELLED_NOTE });
    return seqs.length;
  });

  const begin = db.transaction((input: Parameters<DialAttempts['beginAttempt']>[0]): BeginResult => {
    const found = readCampaign(input.campaignId);
    if (!found || found.record.state !== 'running') return { ok: false, reason: 'not_running' };
    const contact = readStoredContact(input.campaignId, input.seq);
    if (!contact || !isWaiting(contact.state)) return { ok: false, reason: 'not_waiting' };
    if (q.openCount.get(input.campaignId)!.n >= input.maxConcurrent) return { ok: false, reason: 'cap' };
    const pace = takePaceSlot(readPaceState(found.row.pace), input.nowMs, input.callsPerSecond);
    if (!pace.ok) return { ok: false, reason: 'pace', waitMs: pace.waitMs };
    q.setPace.run(writePaceState(pace.state), input.campaignId);
    const begun = beginOnContact(contact, input);
    saveContact(begun.contact);
    q.insertAttempt.run({
      id: begun.attempt.id,
      campaignId: input.campaignId,
      owner: input.owner,
      record: JSON.stringify(begun.attempt),
    });
    q.insertStart.run(input.campaignId, input.nowMs, begun.attempt.id);
    return { ok: true, attempt: begun.attempt, contact: begun.contact };
  });

  const recordCall = db.transaction((campaignId: string, id: string, callSid: string, replace: boolean) => {
    const row = q.attempt.get(id, campaignId);
    if (!row) return false;
    const open = JSON.parse(row.record) as OpenAttempt;
    if (open.callSid === callSid) return true;
    if (open.callSid !== null && !replace) return false;
    const attempt = { ...open, callSid };
    q.setCallSid.run(callSid, JSON.stringify(attempt), id);
    const contact = readStoredContact(campaignId, attempt.contactId);
    if (contact) saveContact(callSidOnContact(contact, id, callSid));
    return true;
  });

  const finish = db.transaction((input: Parameters<DialAttempts['finishAttempt']>[0]) => {
    const row = q.attempt.get(input.attemptId, input.campaignId);
    if (!row) return null;
    const attempt = JSON.parse(row.record) as OpenAttempt;
    const contact = readStoredContact(input.campaignId, attempt.contactId);
    q.deleteAttempt.run(input.attemptId);
    if (!contact) return null;
    const next = finishOnContact(contact, input);
    saveContact(next);
    return next;
  });

  const recordResult = db.transaction(
    (campaignId: string, result: { id: string; atMs: number; failed: boolean }, keepMs: number) => {
      q.insertResult.run(campaignId, result.id, result.atMs, result.failed ? 1 : 0);
      q.trimResults.run(campaignId, result.atMs - keepMs);
    },
  );

  const prune = db.transaction(() => {
    q.pruneStarts.run(now() - STARTS_KEPT_MS);
    for (const { id } of q.expired.all(now() - CAMPAIGN_RETENTION_MS)) {
      dropCampaign.run(id);
      for (const statement of dropOf) statement.run(id);
    }
  });

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

    async addContacts(campaignId, contacts, nowMs): Promise<AddContactsResult> {
      return add.immediate(campaignId, contacts, nowMs);
    },
    async getContact(campaignId, seq) {
      return readStoredContact(campaignId, seq);
    },
    async listContacts(campaignId, { state, limit, cursor }) {
      const after = cursor === undefined ? 0 : seqFromCursor(cursor);
      const rows =
        state === undefined
          ? q.listAll.all(campaignId, after, limit + 1)
          : q.listState.all(campaignId, state, after, limit + 1);
      const contacts = rows.slice(0, limit).map((row) => readContact(row.record));
      const last = contacts.at(-1);
      return { contacts, nextCursor: rows.length > limit && last ? seqCursor(last.seq) : null };
    },
    async contactTally(campaignId) {
      const tally = emptyTally();
      for (const row of q.tally.all(campaignId)) {
        tally.states[row.state as ContactState] += row.n;
        if (row.outcome !== null) tally.outcomes[row.outcome as keyof typeof tally.outcomes] += row.n;
        if (row.outcome !== 'invalid') tally.callable += row.n;
      }
      for (const row of q.variables.all(campaignId)) tally.variables[row.name] = row.count;
      return tally;
    },
    async leaseDueContacts(campaignId, { nowMs, limit, leaseMs }) {
      return lease.immediate(campaignId, nowMs, limit, leaseMs);
    },
    async releaseContact(campaignId, seq, dueAtMs) {
      release.immediate(campaignId, seq, dueAtMs);
    },
    async closeContact(campaignId, seq, how) {
      return close.immediate(campaignId, seq, how);
    },
    async cancelWaitingContacts(campaignId, limit) {
      return cancelWaiting.immediate(campaignId, limit);
    },
    async hasUnfinishedContacts(campaignId) {
      return q.unfinished.get(campaignId) !== undefined;
    },
    async nextDueAtMs(campaignId) {
      return q.nextDue.get(campaignId)?.due_at ?? null;
    },

    async beginAttempt(input) {
      return begin.immediate(input);
    },
    async recordCallSid(campaignId, id, callSid) {
      return recordCall.immediate(campaignId, id, callSid, false);
    },
    async identifyCall(campaignId, id, callSid) {
      return recordCall.immediate(campaignId, id, callSid, true);
    },
    async getOpenAttempt(campaignId, id) {
      const row = q.attempt.get(id, campaignId);
      return row ? (JSON.parse(row.record) as OpenAttempt) : null;
    },
    async findAttemptByCallSid(callSid) {
      const row = q.attemptByCall.get(callSid);
      return row ? (JSON.parse(row.record) as OpenAttempt) : null;
    },
    async finishAttempt(input) {
      return finish.immediate(input);
    },
    async openAttempts(campaignId) {
      return q.openOf.all(campaignId).map((row) => JSON.parse(row.record) as OpenAttempt);
    },
    async adoptAttempt(campaignId, id, from, to) {
      return q.adopt.run({ campaignId, id, from, to }).changes === 1;
    },
    async attemptsBegunSince(campaignId, sinceMs) {
      return q.startsSince.get(campaignId, sinceMs)!.n;
    },

    async recordDialResult(campaignId, result, keepMs) {
      recordResult.immediate(campaignId, result, keepMs);
    },
    async dialResultCounts(campaignId, sinceMs) {
      const row = q.resultCounts.get(campaignId, sinceMs)!;
      return { calls: row.calls, failures: row.failures ?? 0 };
    },

    prune() {
      prune.immediate();
    },
  };
}
