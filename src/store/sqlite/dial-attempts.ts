// The attempts in flight in SQLite: beginning one within the campaign's cap and pace, tying it to
// its call, finishing it onto its contact, and the record of when attempts began.
import type { Database } from 'better-sqlite3';
import type { OpenAttempt } from '../campaign-records.js';
import type { BeginResult, DialAttempts } from '../campaign-store.js';
import { beginOnContact, callSidOnContact, finishOnContact, isWaiting } from '../campaign-transitions.js';
import { readPaceState, takePaceSlot, writePaceState } from '../pace.js';
import type { CampaignRows } from './campaign-rows.js';

export function sqliteDialAttempts(db: Database, rows: CampaignRows): DialAttempts {
  const { readCampaign, readStoredContact, saveContact } = rows;
  const q = {
    setPace: db.prepare('UPDATE campaigns SET pace = ? WHERE id = ?'),
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
  };

  const readAttempt = (campaignId: string, id: string): OpenAttempt | null => {
    const row = q.attempt.get(id, campaignId);
    return row ? (JSON.parse(row.record) as OpenAttempt) : null;
  };

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
    const open = readAttempt(campaignId, id);
    if (!open) return false;
    if (open.callSid === callSid) return true;
    if (open.callSid !== null && !replace) return false;
    const attempt = { ...open, callSid };
    q.setCallSid.run(callSid, JSON.stringify(attempt), id);
    const contact = readStoredContact(campaignId, attempt.contactId);
    if (contact) saveContact(callSidOnContact(contact, id, callSid));
    return true;
  });

  const finish = db.transaction((input: Parameters<DialAttempts['finishAttempt']>[0]) => {
    const attempt = readAttempt(input.campaignId, input.attemptId);
    if (!attempt) return null;
    const contact = readStoredContact(input.campaignId, attempt.contactId);
    q.deleteAttempt.run(input.attemptId);
    if (!contact) return null;
    const next = finishOnContact(contact, input);
    saveContact(next);
    return next;
  });

  return {
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
      return readAttempt(campaignId, id);
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
  };
}
