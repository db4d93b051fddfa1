// Records of ended calls, for operators. Mounted by the app inside the `/v1` admin scope, which
// checks each route's declared role (docs/console.md).
//   GET /calls[?since=&until=&outcome=&reason=&direction=&carrier=&profile=&campaign=&number=
//              &limit=&cursor=]                               → 200 {"calls": [...], "nextCursor": …}
//       newest first; since/until are ISO 8601 bounds on startedAt (since inclusive, until exclusive);
//       follow nextCursor until it is null
//   GET /calls/:callSid                                         → 200 the record; 404 if none
//   GET /calls?live=true: calls in progress instead (live-calls.ts)
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CallRecordQuery } from '../store/call-record.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { LiveCalls } from '../call/watch/live-call.js';
import type { Store } from '../store/store.js';
import { CallPage, CallSidParams, CallsQuery, errors } from './schemas.js';
import { listLiveCalls, wantsLiveCalls } from './live-calls.js';

export interface CallAdminDeps {
  store: Store;
  /** Calls in progress, for `?live=true`. */
  live?: LiveCalls;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const MAX_REASON_CHARS = 200;
const MAX_CURSOR_CHARS = 1_024;

// A calendar date, or a date and time with a zone: a time without one would depend on our clock's.
const ISO_INSTANT =
  /^(\d{4}-\d{2}-\d{2})(?:T([01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

type RawQuery = Record<string, string | string[] | undefined>;

/** One value of a query parameter; a parameter given twice is ambiguous and refused. */
function single(query: RawQuery, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new BadRequestError(`${name} may be given once`);
  return value;
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || limit < 1 || limit > MAX_LIMIT) {
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  return limit;
}

/** The instant `raw` names, as a UTC ISO string; refuses dates that do not exist (2025-02-30). */
function parseInstant(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined) return undefined;
  const match = ISO_INSTANT.exec(raw);
  const ms = match ? Date.parse(raw) : Number.NaN;
  const day = match?.[1];
  // Date.parse rolls an impossible day over into the next month; the calendar date must survive.
  const dayMs = day === undefined ? Number.NaN : Date.parse(`${day}T00:00:00Z`);
  const dayExists = Number.isFinite(dayMs) && new Date(dayMs).toISOString().startsWith(day ?? '');
  if (!Number.isFinite(ms) || !dayExists) {
    throw new BadRequestError(
      `${name} must be an ISO 8601 date or date-time with a zone, like 2025-01-31T09:00:00Z`,
    );
  }
  return new Date(ms).toISOString();
}

function parseOutcome(raw: string | undefined): CallRecordQuery['outcome'] {
  if (raw === undefined || raw === 'completed' || raw === 'failed') return raw;
  throw new BadRequestError('outcome must be completed or failed');
}

function parseReason(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.length === 0 || raw.length > MAX_REASON_CHARS) {
    throw new BadRequestError(`reason must be 1 to ${MAX_REASON_CHARS} characters`);
  }
  return raw;
}

function parseCursor(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  // The store decides whether it handed the cursor out; this only bounds what reaches it.
  if (raw.length === 0 || raw.length > MAX_CURSOR_CHARS) {
    throw new BadRequestError('cursor is not one a previous page handed out');
  }
  return raw;
}

function parseDirection(raw: string | undefined): CallRecordQuery['direction'] {
  if (raw === undefined || raw === 'inbound' || raw === 'outbound') return raw;
  throw new BadRequestError('direction must be inbound or outbound');
}

/** A name filter (carrier, profile, campaign): plain characters, bounded. */
function parseName(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[\w.:-]{1,80}$/.test(raw))
    throw new BadRequestError(`${name} must be 1 to 80 letters, digits or _.:-`);
  return raw;
}

function parseNumber(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^\+[1-9]\d{1,14}$/.test(raw)) {
    throw new BadRequestError('number must be an E.164 number, like +12125550100 (send + as %2B)');
  }
  return raw;
}

function parseQuery(query: RawQuery): CallRecordQuery {
  const filters = {
    direction: parseDirection(single(query, 'direction')),
    carrier: parseName(single(query, 'carrier'), 'carrier'),
    profile: parseName(single(query, 'profile'), 'profile'),
    campaign: parseName(single(query, 'campaign'), 'campaign'),
    number: parseNumber(single(query, 'number')),
  };
  return {
    since: parseInstant(single(query, 'since'), 'since'),
    until: parseInstant(single(query, 'until'), 'until'),
    outcome: parseOutcome(single(query, 'outcome')),
    endReason: parseReason(single(query, 'reason')),
    ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
    limit: parseLimit(single(query, 'limit')),
    cursor: parseCursor(single(query, 'cursor')),
  };
}

export function registerCallAdminRoutes(scope: FastifyInstance, deps: CallAdminDeps): void {
  scope.get<{ Querystring: RawQuery }>(
    '/calls',
    {
      config: { role: 'viewer' },
      schema: {
        summary: 'Ended calls, newest first, filtered and paged; or live calls with ?live=true',
        querystring: CallsQuery,
        response: { 200: CallPage, ...errors(503) },
      },
    },
    async (request) => {
      if (deps.live && wantsLiveCalls(request.query)) return listLiveCalls({ calls: deps.live });
      const page = await deps.store.listCallRecords(parseQuery(request.query));
      return { calls: page.calls, nextCursor: page.nextCursor };
    },
  );

  scope.get<{ Params: { callSid: string } }>(
    '/calls/:callSid',
    {
      config: { role: 'viewer' },
      schema: {
        summary: "An ended call's record: turns, events, analysis",
        params: CallSidParams,
        response: { 200: Type.Ref('CallRecord'), ...errors(404) },
      },
    },
    async (request) => {
      const { callSid } = request.params;
      const record = await deps.store.getCallRecord(callSid);
      if (!record) throw new NotFoundError(`no call ${JSON.stringify(callSid.slice(0, 80))}`);
      return record;
    },
  );
}
