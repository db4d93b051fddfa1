// The results CSV: one row per contact with its phone, its variables, the attempts made, its state
// and final outcome, the last call's duration and who answered it, the call summary and a note.
// Written page by page, so a campaign of any size streams in bounded memory.
import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import type { Store } from '../store/store.js';
import type { ContactRecord } from './records.js';

const PAGE = 500;
const FIXED = ['attempts', 'state', 'outcome', 'duration_seconds', 'answered_by', 'summary', 'note'];

/**
 * A cell a spreadsheet would run as a formula (=, @, or + and - before a non-number) is prefixed
 * with a quote: the CSV is opened by people, and variables and summaries come from outside.
 */
export function safeCell(value: string): string {
  return /^[=@\t\r]/.test(value) || /^[+-][^\d\s.]/.test(value) ? `'${value}` : value;
}

async function* contactPages(store: Store, campaignId: string): AsyncGenerator<ContactRecord[]> {
  let cursor: string | undefined;
  do {
    const page = await store.listContacts(campaignId, { limit: PAGE, ...(cursor ? { cursor } : {}) });
    if (page.contacts.length > 0) yield page.contacts;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}

function row(contact: ContactRecord, variables: readonly string[]): string[] {
  const last = contact.attempts.at(-1);
  return [
    contact.phone,
    ...variables.map((name) => safeCell(contact.variables[name] ?? '')),
    String(contact.attempts.length),
    contact.state,
    contact.outcome ?? '',
    last?.durationMs == null ? '' : String(Math.round(last.durationMs / 1000)),
    last?.answeredBy ?? '',
    safeCell(last?.summary ?? ''),
    safeCell(contact.note ?? ''),
  ];
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
      yield stringify(page.map((contact) => row(contact, variables)));
    }
  }
  return Readable.from(lines());
}
