// Call records in Redis: each record is JSON under its own key, expiring when its retention ends,
// and one sorted set indexes them by start time. Every index member scores 0 and reads
// `<startedAt ms, 16 digits><callSid>`, so the set's lexicographic order is (startedAt, callSid) and
// a page resumes exactly after the last member handed out, however many calls share a millisecond.
// Filters are applied while the index is read in batches, at most MAX_SCANNED members per page. The
// keys share one hash tag so a save stays one transaction on a cluster.
//
//   {calls}:record:<callSid>  the record JSON, expiring at startedAt + retention
//   {calls}:by-start          sorted set, member = 16-digit startedAt ms + callSid
import type { ChainableCommander, Redis } from 'ioredis';
import type { CallRecord, CallRecordPage, CallRecordQuery } from '../../call/record.js';
import { BadRequestError } from '../../errors.js';
import { MAX_CURSOR_CHARS, parseBound, startedAtMs } from '../call-record-query.js';
import type { CallRecords, Clock } from '../store.js';

const MS_DIGITS = 16;
/** Index members read per round trip when filters may drop most of them. */
const FILTERED_BATCH = 200;
/** Index members one page may read; past that, the page ends early with a cursor to go on from. */
const MAX_SCANNED = 10_000;

const digits = (ms: number) => String(Math.max(0, ms)).padStart(MS_DIGITS, '0');
const memberOf = (startedMs: number, callSid: string) => `${digits(startedMs)}${callSid}`;

function encodeCursor(member: string): string {
  return Buffer.from(member).toString('base64url');
}

/** The cursor is the base64url of the last index member handed out. */
function decodeCursor(cursor: string): string {
  if (cursor.length <= MAX_CURSOR_CHARS && /^[A-Za-z0-9_-]+$/.test(cursor)) {
    const member = Buffer.from(cursor, 'base64url').toString('utf8');
    if (new RegExp(`^\\d{${MS_DIGITS}}.`, 's').test(member)) return member;
  }
  throw new BadRequestError('cursor is not one a previous page handed out');
}

/** MULTI does not reject on a failed command; this does. */
async function execAll(tx: ChainableCommander): Promise<void> {
  for (const [err] of (await tx.exec()) ?? []) if (err) throw err;
}

export function redisCallRecords(
  client: Redis,
  prefix: string,
  now: Clock,
  retentionMs: number,
): CallRecords {
  const recordKey = (callSid: string) => `${prefix}{calls}:record:${callSid}`;
  const index = `${prefix}{calls}:by-start`;

  return {
    async saveCallRecord(record) {
      const startedMs = startedAtMs(record);
      const member = memberOf(startedMs, record.callSid);
      const key = recordKey(record.callSid);
      // A replaced record that started at another time leaves its old member behind unless removed.
      // Should two saves race, a stale member can remain; reads skip it (its record names another
      // member) and trimming drops it.
      const previous = await client.get(key);
      const previousMs =
        previous === null ? Number.NaN : Date.parse((JSON.parse(previous) as CallRecord).startedAt);
      const t = now();
      const ttlMs = startedMs + retentionMs - t;
      const tx = client.multi();
      if (Number.isFinite(previousMs) && previousMs !== startedMs) {
        tx.zrem(index, memberOf(previousMs, record.callSid));
      }
      if (ttlMs > 0) tx.set(key, JSON.stringify(record), 'PX', ttlMs).zadd(index, 0, member);
      else tx.del(key).zrem(index, member);
      tx.zremrangebylex(index, '-', `(${digits(t - retentionMs)}`);
      await execAll(tx);
    },

    async getCallRecord(callSid) {
      const json = await client.get(recordKey(callSid));
      return json === null ? null : (JSON.parse(json) as CallRecord);
    },

    async listCallRecords(query: CallRecordQuery): Promise<CallRecordPage> {
      const { limit } = query;
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new BadRequestError('limit must be a positive integer');
      }
      const since = parseBound(query.since, 'since');
      const until = parseBound(query.until, 'until');
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor);

      // Both ends as lex bounds: `[x` includes x, `(x` excludes it; a bare ms prefix sorts before
      // every member of that millisecond.
      const min = `[${digits(Math.max(now() - retentionMs, since ?? 0))}`;
      let max = '+';
      if (until !== null) max = `(${digits(until)}`;
      if (after !== null && (until === null || Number(after.slice(0, MS_DIGITS)) < until)) max = `(${after}`;

      const filtered = query.outcome !== undefined || query.endReason !== undefined;
      const batch = filtered ? Math.max(limit + 1, FILTERED_BATCH) : limit + 1;
      const calls: CallRecord[] = [];
      let lastHandedOut: string | null = null;
      let lastScanned: string | null = null;
      let scanned = 0;

      while (scanned < MAX_SCANNED) {
        const members = await client.zrevrangebylex(index, max, min, 'LIMIT', 0, batch);
        if (members.length === 0) return { calls, nextCursor: null };
        scanned += members.length;
        const jsons = await client.mget(members.map((member) => recordKey(member.slice(MS_DIGITS))));
        for (const [i, member] of members.entries()) {
          const json = jsons[i];
          if (json === null || json === undefined) continue; // expired before trimming reached it
          const record = JSON.parse(json) as CallRecord;
          if (memberOf(startedAtMs(record), record.callSid) !== member) continue; // stale member
          if (query.outcome !== undefined && record.outcome !== query.outcome) continue;
          if (query.endReason !== undefined && record.endReason !== query.endReason) continue;
          if (calls.length === limit) return { calls, nextCursor: encodeCursor(lastHandedOut ?? member) };
          calls.push(record);
          lastHandedOut = member;
        }
        if (members.length < batch) return { calls, nextCursor: null };
        lastScanned = members.at(-1) ?? null;
        max = `(${lastScanned}`;
      }
      // Out of budget: every member up to the last one read has been considered.
      return { calls, nextCursor: lastScanned === null ? null : encodeCursor(lastScanned) };
    },
  };
}
