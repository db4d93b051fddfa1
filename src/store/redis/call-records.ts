// Call records in Redis: each record is JSON under its own key, expiring when its retention ends,
// and an index of sorted sets, one per UTC day of start, each expiring a retention after its day
// ends. Every index member scores 0 and reads `<startedAt ms, 16 digits><callSid>`, so a day's
// lexicographic order is (startedAt, callSid) and a page resumes exactly after the last member
// handed out, however many calls share a millisecond. Listing walks the days newest first, reading
// in batches and applying filters as it goes, at most MAX_SCANNED members per page.
//
// Every key is its own: records and days spread over a cluster's slots, none grows past one day of
// calls, and every step touches one key (keys.ts).
import type { ChainableCommander, Redis } from 'ioredis';
import type { CallRecord, CallRecordPage, CallRecordQuery } from '../call-record.js';
import { BadRequestError } from '../../errors.js';
import {
  hasRecordFilters,
  MAX_CURSOR_CHARS,
  matchesRecordFilters,
  parseBound,
  startedAtMs,
} from '../call-record-query.js';
import type { CallRecords, Clock } from '../store.js';
import { DAY_MS, dayStartMs, type RedisKeys } from './keys.js';

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
  keys: RedisKeys,
  now: Clock,
  retentionMs: number,
): CallRecords {
  /** Reads the records the members name, in order; null where a record is gone. */
  const readRecords = (members: string[]) =>
    Promise.all(members.map((member) => client.get(keys.callRecord(member.slice(MS_DIGITS)))));

  async function unindex(startedMs: number, callSid: string): Promise<void> {
    await client.zrem(keys.callIndex(startedMs), memberOf(startedMs, callSid));
  }

  return {
    async saveCallRecord(record) {
      const startedMs = startedAtMs(record);
      const key = keys.callRecord(record.callSid);
      const previous = await client.get(key);
      const previousMs =
        previous === null ? Number.NaN : Date.parse((JSON.parse(previous) as CallRecord).startedAt);
      const ttlMs = startedMs + retentionMs - now();
      if (ttlMs > 0) {
        await client.set(key, JSON.stringify(record), 'PX', ttlMs);
        const day = keys.callIndex(startedMs);
        await execAll(
          client
            .multi()
            .zadd(day, 0, memberOf(startedMs, record.callSid))
            .pexpireat(day, dayStartMs(startedMs) + DAY_MS + retentionMs),
        );
      } else {
        await client.del(key);
        await unindex(startedMs, record.callSid);
      }
      // A replaced record that started at another time leaves its old member behind unless removed.
      // Should two saves race, a stale member can remain; reads skip it (its record names another
      // member) and its day's expiry drops it.
      if (Number.isFinite(previousMs) && previousMs !== startedMs) await unindex(previousMs, record.callSid);
    },

    async getCallRecord(callSid) {
      const json = await client.get(keys.callRecord(callSid));
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

      // Both ends as lex bounds, the same in every day: `[x` includes x, `(x` excludes it; a bare ms
      // prefix sorts before every member of that millisecond.
      const t = now();
      const minMs = Math.max(t - retentionMs, since ?? 0);
      const min = `[${digits(minMs)}`;
      // Calls start by some instance's clock: a day ahead of ours covers any sane skew, and bounds
      // the walk however far ahead `until` lies.
      let upperMs = t + DAY_MS;
      let max = '+';
      if (until !== null && until <= upperMs) {
        max = `(${digits(until)}`;
        upperMs = until - 1;
      }
      if (after !== null) {
        const afterMs = Number(after.slice(0, MS_DIGITS));
        if (afterMs <= upperMs) {
          max = `(${after}`;
          upperMs = afterMs;
        }
      }

      const filtered = hasRecordFilters(query);
      const batch = filtered ? Math.max(limit + 1, FILTERED_BATCH) : limit + 1;
      const calls: CallRecord[] = [];
      let lastHandedOut: string | null = null;
      let lastScanned: string | null = null;
      let scanned = 0;
      const lastDay = dayStartMs(minMs);
      let day = dayStartMs(upperMs);

      while (day >= lastDay && scanned < MAX_SCANNED) {
        const members = await client.zrevrangebylex(keys.callIndex(day), max, min, 'LIMIT', 0, batch);
        scanned += members.length;
        const jsons = await readRecords(members);
        for (const [i, member] of members.entries()) {
          const json = jsons[i];
          if (json === null || json === undefined) continue; // expired, or its save never finished
          const record = JSON.parse(json) as CallRecord;
          if (memberOf(startedAtMs(record), record.callSid) !== member) continue; // stale member
          if (!matchesRecordFilters(record, query)) continue;
          if (calls.length === limit) return { calls, nextCursor: encodeCursor(lastHandedOut ?? member) };
          calls.push(record);
          lastHandedOut = member;
        }
        if (members.length > 0) {
          lastScanned = members.at(-1) ?? null;
          max = `(${lastScanned}`;
        }
        if (members.length < batch) day -= DAY_MS; // this day is read to its start
      }
      if (day < lastDay) return { calls, nextCursor: null };
      // Out of budget: every member up to the last one read has been considered.
      return { calls, nextCursor: lastScanned === null ? null : encodeCursor(lastScanned) };
    },
  };
}
