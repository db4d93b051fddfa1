// Reading a campaign row and reading or saving a contact row: the steps campaigns, contacts and
// attempts all take inside their own transactions.
import type { Database } from 'better-sqlite3';
import type { CampaignRecord, ContactRecord } from '../campaign-records.js';
import { readContact } from '../campaign-transitions.js';

interface CampaignRow {
  record: string;
  state: string;
  next_seq: number;
  pace: string | null;
}
export interface ContactRow {
  record: string;
}

export interface CampaignRows {
  readCampaign(id: string): { row: CampaignRow; record: CampaignRecord } | null;
  readStoredContact(campaignId: string, seq: number): ContactRecord | null;
  saveContact(contact: ContactRecord, leaseUntil?: number): void;
}

export function campaignRows(db: Database): CampaignRows {
  const q = {
    campaign: db.prepare<[string], CampaignRow>(
      'SELECT record, state, next_seq, pace FROM campaigns WHERE id = ?',
    ),
    contact: db.prepare<[string, number], ContactRow & { lease_until: number }>(
      'SELECT record, lease_until FROM campaign_contacts WHERE campaign_id = ? AND seq = ?',
    ),
    saveContact: db.prepare(
      `UPDATE campaign_contacts SET state = @state, due_at = @dueAt, outcome = @outcome, lease_until = @leaseUntil,
       record = @record WHERE campaign_id = @campaignId AND seq = @seq`,
    ),
  };

  const readCampaign = (id: string) => {
    const row = q.campaign.get(id);
    return row ? { row, record: JSON.parse(row.record) as CampaignRecord } : null;
  };
  const readStoredContact = (campaignId: string, seq: number) => {
    const row = q.contact.get(campaignId, seq);
    return row ? readContact(row.record) : null;
  };
  const saveContact = (contact: ContactRecord, leaseUntil = 0) => {
    q.saveContact.run({
      campaignId: contact.campaignId,
      seq: contact.seq,
      state: contact.state,
      dueAt: contact.dueAtMs,
      outcome: contact.outcome,
      leaseUntil,
      record: JSON.stringify(contact),
    });
  };

  return { readCampaign, readStoredContact, saveContact };
}
