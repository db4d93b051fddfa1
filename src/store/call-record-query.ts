// What both call-record adapters agree on: how long records are kept, how a record's start is
// read, and how a query's time bounds are checked.
import type { CallRecord } from './call-record.js';
import { BadRequestError } from '../errors.js';

export const DEFAULT_CALL_RECORD_RETENTION_MS = 90 * 24 * 60 * 60_000;
/** Cursors are opaque to clients; anything longer than this was not made by us. */
export const MAX_CURSOR_CHARS = 1_024;

export function startedAtMs(record: CallRecord): number {
  const ms = Date.parse(record.startedAt);
  if (!Number.isFinite(ms) || ms < 0) {
    throw new TypeError(
      `call record ${record.callSid}: startedAt ${JSON.stringify(record.startedAt)} is not a date`,
    );
  }
  return ms;
}

export function parseBound(value: string | undefined, name: string): number | null {
  if (value === undefined) return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) throw new BadRequestError(`${name} must be an ISO 8601 date`);
  return ms;
}
