// What both call-record adapters agree on: how long records are kept, how a record's start is
// read, and how a query's time bounds are checked.
import type { CallRecord, CallRecordQuery } from './call-record.js';
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

/** Whether the query filters on more than the time bounds and order the indexes hold. */
export function hasRecordFilters(query: CallRecordQuery): boolean {
  return (
    query.outcome !== undefined ||
    query.endReason !== undefined ||
    query.direction !== undefined ||
    query.carrier !== undefined ||
    query.profile !== undefined ||
    query.campaign !== undefined ||
    query.number !== undefined
  );
}

/** Whether `record` passes the query's filters (its time bounds aside). */
export function matchesRecordFilters(record: CallRecord, query: CallRecordQuery): boolean {
  if (query.outcome !== undefined && record.outcome !== query.outcome) return false;
  if (query.endReason !== undefined && record.endReason !== query.endReason) return false;
  if (query.direction !== undefined && record.direction !== query.direction) return false;
  if (query.carrier !== undefined && record.carrier !== query.carrier) return false;
  if (query.profile !== undefined && record.profile !== query.profile) return false;
  if (query.campaign !== undefined && record.outbound?.campaign !== query.campaign) return false;
  if (query.number !== undefined && record.from !== query.number && record.to !== query.number) return false;
  return true;
}
