// Numbers for the do-not-call list, as uploaded: a JSON `{"numbers": [...]}` of E.164 numbers, or a
// CSV with a `phone` column (and an optional `country` column for national numbers). Each number is
// judged on its own; bad ones come back with their row and reason. Read in slices that yield to the
// event loop (slices.ts), so a large list never stalls live calls.
import { DncJson, MAX_DNC_NUMBERS_PER_UPLOAD } from '../api/dnc.js';
import { BadRequestError } from '../errors.js';
import type { RejectedRow } from './contacts-import.js';
import { checkBody } from './field-errors.js';
import { normalizePhone } from './phone.js';
import { mapInSlices, parseCsvInSlices, STORE_BATCH, yieldToLoop } from './slices.js';

export { MAX_DNC_NUMBERS_PER_UPLOAD };

export interface DncImport {
  numbers: string[];
  rejected: RejectedRow[];
}

async function judge(entries: Array<{ row: number; phone: string; country?: string }>): Promise<DncImport> {
  const numbers = new Set<string>();
  const rejected: RejectedRow[] = [];
  await mapInSlices(entries, ({ row, phone, country }) => {
    const checked = normalizePhone(phone, country);
    if (checked.ok) numbers.add(checked.e164);
    else rejected.push({ row, reason: checked.reason });
  });
  return { numbers: [...numbers], rejected };
}

/** Adds the numbers a batch at a time, the event loop given back between batches; how many were new. */
export async function addInBatches(
  numbers: readonly string[],
  add: (batch: readonly string[]) => Promise<number>,
): Promise<number> {
  let added = 0;
  for (let start = 0; start < numbers.length; start += STORE_BATCH) {
    if (start > 0) await yieldToLoop();
    added += await add(numbers.slice(start, start + STORE_BATCH));
  }
  return added;
}

export async function dncFromJson(body: unknown): Promise<DncImport> {
  const { numbers } = checkBody(DncJson, body, 'invalid do-not-call list');
  // E.164 only: a JSON list has no column to say which country a national number belongs to.
  return judge(
    numbers.map((phone, i) => ({ row: i + 1, phone: phone.trim().startsWith('+') ? phone : `+${phone}` })),
  );
}

export async function dncFromCsv(text: string): Promise<DncImport> {
  let records: string[][];
  try {
    records = await parseCsvInSlices<string[]>(text, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      to: MAX_DNC_NUMBERS_PER_UPLOAD + 2,
    });
  } catch (err) {
    const { lines } = err as { lines?: number };
    throw new BadRequestError(
      `do-not-call CSV: not readable as CSV${typeof lines === 'number' ? ` at line ${lines}` : ''}`,
    );
  }
  const header = (records[0] ?? []).map((name) => name.trim().toLowerCase());
  const phoneAt = header.indexOf('phone');
  if (phoneAt < 0) throw new BadRequestError('do-not-call CSV: the header has no phone column');
  if (records.length - 1 > MAX_DNC_NUMBERS_PER_UPLOAD) {
    throw new BadRequestError(
      `do-not-call CSV: more than ${MAX_DNC_NUMBERS_PER_UPLOAD} rows; upload them in several parts`,
    );
  }
  const countryAt = header.indexOf('country');
  return judge(
    records.slice(1).map((record, i) => ({
      row: i + 2,
      phone: record[phoneAt] ?? '',
      ...(countryAt >= 0 && record[countryAt] !== undefined ? { country: record[countryAt] } : {}),
    })),
  );
}
