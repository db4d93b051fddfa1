// The results CSV: one row per contact with its phone, its variables, the attempts made, its state
// and final outcome, the last call's duration and who answered it, the call summary and a note,
// then the last call's post-call analysis (sentiment, topics, intents and its outcome, read from the
// call's record: analysis lands after the call, so an export made later has more of it). Written
// page by page, so a campaign of any size streams in bounded memory. Every cell, the header's too,
// is neutralised against spreadsheet formulas (csv-cell.ts).
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { CallRecord } from '../store/call-record.js';
import { formatAnalysis } from '../store/call-analysis.js';
import type { Store } from '../store/store.js';
import type { ContactRecord } from '../store/campaign-records.js';
import { safeCell } from './csv-cell.js';

const PAGE = 500;
const FIXED = [
  'attempts',
  'state',
  'outcome',
  'duration_seconds',
  'answered_by',
  'summary',
  'note',
  'sentiment',
  'topics',
  'intents',
  'analysis',
];

async function* contactPages(store: Store, campaignId: string): AsyncGenerator<ContactRecord[]> {
  let cursor: string | undefined;
  do {
    const page = await store.listContacts(campaignId, { limit: PAGE, ...(cursor ? { cursor } : {}) });
    if (page.contacts.length > 0) yield page.contacts;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

function row(contact: ContactRecord, variables: readonly string[], record: CallRecord | null): string[] {
  const last = contact.attempts.at(-1);
  const analysis = formatAnalysis(record?.analysis);
  // Every cell, even those the server writes itself: one rule, no column forgotten.
  return [
    contact.phone,
    ...variables.map((name) => contact.variables[name] ?? ''),
    String(contact.attempts.length),
    contact.state,
    contact.outcome ?? '',
    last?.durationMs == null ? '' : String(Math.round(last.durationMs / 1000)),
    last?.answeredBy ?? '',
    last?.summary ?? analysis.summary,
    note(contact),
    analysis.sentiment,
    analysis.topics,
    analysis.intents,
    analysis.analysis,
  ].map(safeCell);
}

/** Outcomes that always say why in the note column, even when the carrier gave no reason. */
const UNEXPLAINED: Partial<Record<string, string>> = {
  failed: 'the call failed; the carrier gave no reason',
  cancelled: 'the campaign was cancelled',
};

/** Why a contact ended as it did: its own note, else its last attempt's reason (a carrier's status, a cancel). */
function note(contact: ContactRecord): string {
  const said = contact.note ?? contact.attempts.at(-1)?.reason ?? null;
  return said ?? (contact.outcome ? (UNEXPLAINED[contact.outcome] ?? '') : '');
}

/** The record of the contact's last call, for its analysis; null when there is none (yet). */
async function lastCallRecord(store: Store, contact: ContactRecord): Promise<CallRecord | null> {
  const callSid = contact.attempts.at(-1)?.callSid;
  if (!callSid) return null;
  // An export still has its other columns when the records cannot be read.
  return store.getCallRecord(callSid).catch(() => null);
}

/** The results as CSV text, streamed: a first pass finds the variable columns, a second writes rows. */
export function resultsCsv(store: Store, campaignId: string): Readable {
  async function* lines() {
    const variables: string[] = [];
    const known = new Set<string>();
    for await (const page of contactPages(store, campaignId)) {
      for (const contact of page) {
        for (const name of Object.keys(contact.variables)) {
          if (!known.has(name)) {
            known.add(name);
            variables.push(name);
          }
        }
      }
    }
    yield stringify([['phone', ...variables.map(safeCell), ...FIXED]]);
    for await (const page of contactPages(store, campaignId)) {
      const records = await Promise.all(page.map((contact) => lastCallRecord(store, contact)));
      yield stringify(page.map((contact, i) => row(contact, variables, records[i] ?? null)));
    }
  }
  return Readable.from(lines());
}
