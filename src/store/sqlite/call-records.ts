// Call records in SQLite: the record as JSON, beside the columns the admin API filters and orders
// on. `started_at` holds milliseconds, so records written with different UTC offsets still order by
// instant. Rows past retention are deleted on save and never read in the meantime.
import type { Database, Statement } from 'better-sqlite3';
import type { CallRecord, CallRecordPage, CallRecordQuery } from '../call-record.js';
import { BadRequestError } from '../../errors.js';
import { MAX_CURSOR_CHARS, parseBound, startedAtMs } from '../call-record-query.js';
import type { CallRecords, Clock } from '../store.js';
import type { Migration } from './migrations.js';

export const callRecordMigrations: readonly Migration[] = [
  {
    id: 'call-records-1',
    sql: `CREATE TABLE call_records (
            call_sid TEXT PRIMARY KEY,
            started_at INTEGER NOT NULL,
            outcome TEXT NOT NULL,
            end_reason TEXT NOT NULL,
            record TEXT NOT NULL
          );
          CREATE INDEX call_records_started ON call_records (started_at, call_sid);
          CREATE INDEX call_records_outcome ON call_records (outcome, started_at, call_sid);
          CREATE INDEX call_records_end_reason ON call_records (end_reason, started_at, call_sid);`,
  },
];

interface Position {
  startedMs: number;
  callSid: string;
}

function encodeCursor(at: Position): string {
  return Buffer.from(JSON.stringify([at.startedMs, at.callSid])).toString('base64url');
}

function decodeCursor(cursor: string): Position {
  let value: unknown = null;
  if (cursor.length <= MAX_CURSOR_CHARS && /^[A-Za-z0-9_-]+$/.test(cursor)) {
    try {
      value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      value = null;
    }
  }
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    !Number.isSafeInteger(value[0]) ||
    typeof value[1] !== 'string'
  ) {
    throw new BadRequestError('cursor is not one a previous page handed out');
  }
  return { startedMs: value[0] as number, callSid: value[1] };
}

interface Row {
  call_sid: string;
  started_at: number;
  record: string;
}

type ListParams = Record<string, string | number>;

export function sqliteCallRecords(db: Database, now: Clock, retentionMs: number): CallRecords {
  const upsert = db.prepare<{
    callSid: string;
    startedAt: number;
    outcome: string;
    endReason: string;
    record: string;
  }>(
    `INSERT INTO call_records (call_sid, started_at, outcome, end_reason, record)
     VALUES (@callSid, @startedAt, @outcome, @endReason, @record)
     ON CONFLICT (call_sid) DO UPDATE SET started_at = excluded.started_at, outcome = excluded.outcome,
       end_reason = excluded.end_reason, record = excluded.record`,
  );
  const prune = db.prepare<[number]>('DELETE FROM call_records WHERE started_at < ?');
  const byId = db.prepare<[string, number], Row>(
    'SELECT call_sid, started_at, record FROM call_records WHERE call_sid = ? AND started_at >= ?',
  );

  // One statement per combination of filters, prepared once each, so each can use its index.
  const listStatements = new Map<string, Statement<ListParams, Row>>();
  const listStatement = (clauses: string[]): Statement<ListParams, Row> => {
    const key = clauses.join(' AND ');
    let statement = listStatements.get(key);
    if (!statement) {
      statement = db.prepare<ListParams, Row>(
        `SELECT call_sid, started_at, record FROM call_records WHERE ${key}
         ORDER BY started_at DESC, call_sid DESC LIMIT @take`,
      );
      listStatements.set(key, statement);
    }
    return statement;
  };

  // The record and the pruning commit together: one write per save.
  const saveTx = db.transaction((record: CallRecord, startedMs: number) => {
    upsert.run({
      callSid: record.callSid,
      startedAt: startedMs,
      outcome: record.outcome,
      endReason: record.endReason,
      record: JSON.stringify(record),
    });
    prune.run(now() - retentionMs);
  });

  return {
    async saveCallRecord(record) {
      saveTx(record, startedAtMs(record));
    },

    async getCallRecord(callSid) {
      const row = byId.get(callSid, now() - retentionMs);
      return row ? (JSON.parse(row.record) as CallRecord) : null;
    },

    async listCallRecords(query: CallRecordQuery): Promise<CallRecordPage> {
      if (!Number.isSafeInteger(query.limit) || query.limit < 1) {
        throw new BadRequestError('limit must be a positive integer');
      }
      const since = parseBound(query.since, 'since');
      const until = parseBound(query.until, 'until');
      const after = query.cursor === undefined ? null : decodeCursor(query.cursor);

      const clauses = ['started_at >= @from'];
      const params: ListParams = { from: Math.max(now() - retentionMs, since ?? 0), take: query.limit + 1 };
      if (until !== null) {
        clauses.push('started_at < @until');
        params.until = until;
      }
      if (query.outcome !== undefined) {
        clauses.push('outcome = @outcome');
        params.outcome = query.outcome;
      }
      if (query.endReason !== undefined) {
        clauses.push('end_reason = @endReason');
        params.endReason = query.endReason;
      }
      // The record's own fields: read from its JSON over the rows the time index already bounds.
      const jsonFilters = [
        ['direction', '$.direction', query.direction],
        ['carrier', '$.carrier', query.carrier],
        ['profile', '$.profile', query.profile],
        ['campaign', '$.outbound.campaign', query.campaign],
      ] as const;
      for (const [name, path, value] of jsonFilters) {
        if (value === undefined) continue;
        clauses.push(`json_extract(record, '${path}') = @${name}`);
        params[name] = value;
      }
      if (query.number !== undefined) {
        clauses.push(`(json_extract(record, '$.from') = @number OR json_extract(record, '$.to') = @number)`);
        params.number = query.number;
      }
      if (after) {
        // The plain bound lets the planner range over the index; the row value breaks ties.
        clauses.push('started_at <= @afterMs AND (started_at, call_sid) < (@afterMs, @afterSid)');
        params.afterMs = after.startedMs;
        params.afterSid = after.callSid;
      }

      const rows = listStatement(clauses).all(params);
      const page = rows.slice(0, query.limit);
      const last = page.at(-1);
      return {
        calls: page.map((row) => JSON.parse(row.record) as CallRecord),
        nextCursor:
          rows.length > query.limit && last
            ? encodeCursor({ startedMs: last.started_at, callSid: last.call_sid })
            : null,
      };
    },
  };
}
