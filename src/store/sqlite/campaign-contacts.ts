// A campaign's contacts in SQLite: adding them, paging and tallying them, and leasing the due ones
// to the dialer.
import type { Database } from 'better-sqlite3';
import type { ContactState } from '../campaign-records.js';
import {
  type AddContactsResult,
  type CampaignContacts,
  MAX_CONTACTS_PER_CAMPAIGN,
} from '../campaign-store.js';
import {
  closeOnContact,
  emptyTally,
  isWaiting,
  newContactRecord,
  readContact,
  seqCursor,
  seqFromCursor,
  ACCEPTS_CONTACTS,
  CANCELLED_NOTE,
} from '../campaign-transitions.js';
import type { CampaignRows, ContactRow } from './campaign-rows.js';

export function sqliteCampaignContacts(db: Database, rows: CampaignRows): CampaignContacts {
  const { readCampaign, readStoredContact, saveContact } = rows;
  const q = {
    setNextSeq: db.prepare('UPDATE campaigns SET next_seq = ? WHERE id = ?'),
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

  return {
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
  };
}
