// Contacts as uploaded, CSV or a JSON array, turned into contacts the dialer can use. Each row is
// judged on its own: a bad row is rejected with its row number and reason, the others are added.
// `phone` is E.164, or national with a `country` column; `timezone` (IANA) is optional, else derived
// from the number, else the campaign's; every other column is a variable. A row whose phone is not
// a number is also kept as a contact with the outcome `invalid`, so the results show it; a row
// refused for any other reason (a duplicate, a placeholder with no value, an unknown zone) is only
// reported, so the corrected row can be added again. Parsing and validation run in slices that
// yield to the event loop (slices.ts), so a large upload never stalls live calls.
import { BadRequestError } from '../errors.js';
import { normalizePhone } from './phone.js';
import type { NewContact } from '../store/campaign-records.js';
import { missingVariablesProblem, type RequiredVariables } from './template.js';
import { ianaZone, zoneOfNumber } from './timezone.js';
import { mapInSlices, parseCsvInSlices, Slicer } from './slices.js';
import type { DialPolicy } from '../trust/dial-policy.js';

export const CONTACT_LIMITS = {
  maxRowsPerUpload: 50_000,
  maxColumns: 50,
  maxColumnNameChars: 64,
  maxValueChars: 1_000,
} as const;

export interface RejectedRow {
  row: number;
  reason: string;
}

export interface ContactImport {
  /** Contacts to store: the callable ones, and those kept as `invalid`. */
  contacts: NewContact[];
  rejected: RejectedRow[];
}

export interface ImportContext {
  /** Zone of contacts with no zone of their own. */
  campaignTimezone: string;
  /** Placeholders every contact must fill. */
  required: RequiredVariables;
  /** A number it refuses is a rejected row with the rule as the reason. */
  dialPolicy?: DialPolicy;
}

/** The fields of one row before validation; `row` as the user counts it. */
interface RawRow {
  row: number;
  fields: Record<string, string>;
}

const RESERVED = ['phone', 'country', 'timezone'] as const;

/** Rows of a CSV upload: a header row naming the columns, then one contact per row. */
export async function contactsFromCsv(text: string, context: ImportContext): Promise<ContactImport> {
  const records = await parseCsv(text);
  const header = records[0];
  if (!header) throw new BadRequestError('contacts CSV: empty; the first row names the columns');
  const columns = checkHeader(header.record);
  if (records.length - 1 > CONTACT_LIMITS.maxRowsPerUpload) {
    throw new BadRequestError(
      `contacts CSV: more than ${CONTACT_LIMITS.maxRowsPerUpload} rows; upload them in several parts`,
    );
  }
  const rows = await mapInSlices(records.slice(1), ({ record, row }): RawRow | RejectedRow => {
    if (record.length !== columns.length) {
      return { row, reason: `has ${record.length} fields, the header has ${columns.length}` };
    }
    return { row, fields: Object.fromEntries(columns.map((name, i) => [name, record[i]!])) };
  });
  return importRows(rows, context);
}

/** A JSON array of objects, one per contact; row 1 is the first element. */
export async function contactsFromJson(body: unknown, context: ImportContext): Promise<ContactImport> {
  if (!Array.isArray(body)) {
    throw new BadRequestError('contacts: the body must be a JSON array of objects, or text/csv');
  }
  if (body.length > CONTACT_LIMITS.maxRowsPerUpload) {
    throw new BadRequestError(
      `contacts: more than ${CONTACT_LIMITS.maxRowsPerUpload} contacts; upload them in several parts`,
    );
  }
  const rows = await mapInSlices(body as unknown[], (item: unknown, index): RawRow | RejectedRow => {
    const row = index + 1;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      return { row, reason: 'must be an object with a phone field' };
    }
    const entries = Object.entries(item as Record<string, unknown>);
    if (entries.length > CONTACT_LIMITS.maxColumns) {
      return { row, reason: `has more than ${CONTACT_LIMITS.maxColumns} fields` };
    }
    const fields: Record<string, string> = {};
    for (const [key, value] of entries) {
      const name = RESERVED.find((r) => r === key.trim().toLowerCase()) ?? key.trim();
      const problem = columnNameProblem(name);
      if (problem) return { row, reason: problem };
      if (Object.hasOwn(fields, name)) return { row, reason: `names ${JSON.stringify(name)} twice` };
      if (value === null || value === undefined) continue;
      if (typeof value === 'string') fields[name] = value;
      else if (typeof value === 'number' || typeof value === 'boolean') fields[name] = String(value);
      else return { row, reason: `${name} must be text, a number or true/false` };
    }
    return { row, fields };
  });
  return importRows(rows, context);
}

async function importRows(
  rows: ReadonlyArray<RawRow | RejectedRow>,
  context: ImportContext,
): Promise<ContactImport> {
  const contacts: NewContact[] = [];
  const rejected: RejectedRow[] = [];
  const firstRowOf = new Map<string, number>();
  const slicer = new Slicer();
  for (const raw of rows) {
    await slicer.next();
    if ('reason' in raw) {
      rejected.push(raw);
      continue;
    }
    const judged = judgeRow(raw, context);
    if ('reason' in judged) {
      rejected.push({ row: raw.row, reason: judged.reason });
      if (judged.keep) contacts.push(judged.keep);
      continue;
    }
    const first = firstRowOf.get(judged.phone);
    if (first !== undefined) {
      rejected.push({ row: raw.row, reason: `duplicate of row ${first}` });
      continue;
    }
    firstRowOf.set(judged.phone, raw.row);
    contacts.push(judged);
  }
  return { contacts, rejected };
}

function judgeRow(
  { row, fields }: RawRow,
  context: ImportContext,
): NewContact | { reason: string; keep?: NewContact } {
  const tooLong = Object.entries(fields).find(([, value]) => value.length > CONTACT_LIMITS.maxValueChars);
  if (tooLong) return { reason: `${tooLong[0]} is longer than ${CONTACT_LIMITS.maxValueChars} characters` };
  const { phone: rawPhone, country, timezone, ...variables } = fields;
  if (rawPhone === undefined) return { reason: 'phone is missing' };
  const phone = normalizePhone(rawPhone, country);
  if (!phone.ok) {
    // An emergency number or a short code is no valid number either: the reason says which it is.
    const refusal = rawPhone.trim().startsWith('+') ? context.dialPolicy?.check(rawPhone.trim()) : undefined;
    const reason = refusal && !refusal.ok ? `refused by the dial policy: ${refusal.reason}` : phone.reason;
    const shown = rawPhone.trim().slice(0, 40);
    const keep: NewContact = {
      row,
      phone: shown,
      country: null,
      timezone: context.campaignTimezone,
      variables: trimmed(variables),
      invalid: reason,
    };
    return { reason, ...(shown === '' ? {} : { keep }) };
  }
  const verdict = context.dialPolicy?.check(phone.e164) ?? { ok: true };
  if (!verdict.ok) return { reason: `refused by the dial policy: ${verdict.reason}` };
  let zone: string | null = null;
  if (timezone !== undefined && timezone.trim() !== '') {
    zone = ianaZone(timezone);
    if (zone === null) return { reason: 'timezone is not an IANA time zone, like Europe/Paris' };
  }
  const values = trimmed(variables);
  const missing = missingVariablesProblem(context.required, values);
  if (missing) return { reason: missing };
  return {
    row,
    phone: phone.e164,
    country: phone.country,
    timezone: zone ?? zoneOfNumber(phone.country, phone.nationalNumber) ?? context.campaignTimezone,
    variables: values,
    invalid: null,
  };
}

function trimmed(variables: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, v.trim()]));
}

function columnNameProblem(name: string): string | null {
  if (name === '') return 'a column has no name';
  if (name.length > CONTACT_LIMITS.maxColumnNameChars) {
    return `a column name is longer than ${CONTACT_LIMITS.maxColumnNameChars} characters`;
  }
  if (/[\p{Cc}]/u.test(name)) return 'a column name holds control characters';
  return null;
}

function checkHeader(header: readonly string[]): string[] {
  if (header.length > CONTACT_LIMITS.maxColumns) {
    throw new BadRequestError(`contacts CSV: more than ${CONTACT_LIMITS.maxColumns} columns`);
  }
  const columns = header.map((raw) => RESERVED.find((r) => r === raw.trim().toLowerCase()) ?? raw.trim());
  for (const [i, name] of columns.entries()) {
    const problem = columnNameProblem(name);
    if (problem)
      throw new BadRequestError(`contacts CSV: header column ${i + 1}: ${problem.replace(/^a column /, '')}`);
    if (columns.indexOf(name) !== i) {
      throw new BadRequestError(`contacts CSV: the header names ${JSON.stringify(name)} twice`);
    }
  }
  if (!columns.includes('phone')) {
    throw new BadRequestError('contacts CSV: the header has no phone column');
  }
  return columns;
}

interface CsvRecord {
  record: string[];
  row: number;
}

/** Comma-separated, or semicolon- or tab-separated when the header uses those instead. */
async function parseCsv(text: string): Promise<CsvRecord[]> {
  // Only the header is looked at: a regex over the whole upload would hold the event loop.
  const end = text.indexOf('\n');
  const firstLine = text.slice(0, end < 0 ? text.length : end).replace(/^\uFEFF/, '');
  const delimiter = firstLine.includes(',')
    ? ','
    : firstLine.includes(';')
      ? ';'
      : firstLine.includes('\t')
        ? '\t'
        : ',';
  try {
    const parsed = await parseCsvInSlices<{ record: string[]; info: { records: number } }>(text, {
      bom: true,
      delimiter,
      relax_column_count: true,
      skip_empty_lines: true,
      info: true,
      // A row beyond the limit is not worth reading: stop one past it.
      to: CONTACT_LIMITS.maxRowsPerUpload + 2,
    });
    return parsed.map(({ record, info }) => ({ record, row: info.records }));
  } catch (err) {
    // csv-parse messages may quote the content; keep only what went wrong and where.
    const { code, lines } = err as { code?: string; lines?: number };
    const where = typeof lines === 'number' ? ` at line ${lines}` : '';
    const what =
      code === 'CSV_QUOTE_NOT_CLOSED'
        ? 'a quoted field is never closed'
        : code === 'CSV_INVALID_CLOSING_QUOTE'
          ? 'a closing quote is followed by text'
          : 'not readable as CSV';
    throw new BadRequestError(`contacts CSV: ${what}${where}`);
  }
}
