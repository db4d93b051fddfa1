// A campaign's contacts in SQLite: paging and tallying them, and leasing the due ones to the dialer;
// adding them is contact-upload.ts.
import type { Database } from 'better-sqlite3';
import type { ContactState } from '../campaign-records.js';
import type { CampaignContacts } from '../campaign-store.js';
import {
  closeOnContact,
  emptyTally,
  isWaiting,
  readContact,
  seqCursor,
  seqFromCursor,
  CANCELLED_NOTE,
} from '../campaign-transitions.js';
import type { CampaignRows, ContactRow } from './campaign-rows.js';
import { sqliteContactUpload } from './contact-upload.js';

export function sqliteCampaignContacts(db: Database, rows: CampaignRows): CampaignContacts {
  const { readStoredContact, saveContact } = rows;
  const q = {
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
  };

  const addContacts = sqliteContactUpload(db, rows);

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

  return {
    async addContacts(campaignId, contacts, nowMs) {
      return addContacts(campaignId, contacts, nowMs);
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
  };
}
