// Adding contacts to a campaign in SQLite: one transaction that checks the campaign's state, skips
// numbers it already holds, stops at its size and counts the contacts' variables.
import type { Database } from 'better-sqlite3';
import type { NewContact } from '../campaign-records.js';
import { type AddContactsResult, MAX_CONTACTS_PER_CAMPAIGN } from '../campaign-store.js';
import { ACCEPTS_CONTACTS, newContactRecord } from '../campaign-transitions.js';
import type { CampaignRows } from './campaign-rows.js';

export type AddContacts = (
  campaignId: string,
  contacts: readonly NewContact[],
  nowMs: number,
) => AddContactsResult;

export function sqliteContactUpload(db: Database, { readCampaign }: CampaignRows): AddContacts {
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
  };

  const add = db.transaction(
    (campaignId: string, contacts: readonly NewContact[], nowMs: number): AddContactsResult => {
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
  // Immediate: the campaign's next seq is read and written in the same write lock.
  return (campaignId, contacts, nowMs) => add.immediate(campaignId, contacts, nowMs);
}
