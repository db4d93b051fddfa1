// Records of ended calls, for operators. Mounted by the app inside the `/v1` admin scope, which
// checks each route's declared role (docs/console.md).
//   GET /calls[?since=&until=&outcome=&reason=&direction=&carrier=&profile=&campaign=&number=
//              &limit=&cursor=]                               → 200 {"calls": [...], "nextCursor": …}
//       newest first; since/until are ISO 8601 bounds on startedAt (since inclusive, until exclusive);
//       follow nextCursor until it is null
//   GET /calls/:callSid                                         → 200 the record; 404 if none
//   GET /calls?live=true: calls in progress instead (live-calls.ts)
import type { FastifyInstance } from 'fastify';
import type { CallsQuery } from '../api/calls.js';
import { PAGE_LIMITS } from '../api/common.js';
import type { CallRecordQuery } from '../store/call-record.js';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { LiveCalls } from '../call/watch/live-call.js';
import type { Store } from '../store/store.js';
import { routeSchema, typed } from './schemas.js';
import { listLiveCalls } from './live-calls.js';

export interface CallAdminDeps {
  store: Store;
  /** Calls in progress, for `?live=true`. */
  live?: LiveCalls;
}

/** The instant `raw` names, as a UTC ISO string; refuses dates that do not exist (2025-02-30). */
function parseInstant(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined) return undefined;
  // The schema checked the form (src/api/calls.ts); the calendar is checked here.
  const ms = Date.parse(raw);
  const day = raw.slice(0, 10);
  // Date.parse rolls an impossible day over into the next month; the calendar date must survive.
  const dayMs = Date.parse(`${day}T00:00:00Z`);
  const dayExists = Number.isFinite(dayMs) && new Date(dayMs).toISOString().startsWith(day);
  if (!Number.isFinite(ms) || !dayExists) {
    throw new BadRequestError(
      `${name} must be an ISO 8601 date or date-time with a zone, like 2025-01-31T09:00:00Z`,
    );
  }
  return new Date(ms).toISOString();
}

function parseQuery(query: CallsQuery): CallRecordQuery {
  const { direction, carrier, profile, campaign, number } = query;
  const filters = { direction, carrier, profile, campaign, number };
  return {
    since: parseInstant(query.since, 'since'),
    until: parseInstant(query.until, 'until'),
    outcome: query.outcome,
    endReason: query.reason,
    ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
    limit: query.limit ?? PAGE_LIMITS.calls.fallback,
    cursor: query.cursor,
  };
}

export function registerCallAdminRoutes(scope: FastifyInstance, deps: CallAdminDeps): void {
  const api = typed(scope);
  api.get(
    '/calls',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/calls',
        'get',
        'Ended calls, newest first, filtered and paged; or live calls with ?live=true',
        503,
      ),
    },
    async (request) => {
      if (deps.live && request.query.live === 'true') return listLiveCalls({ calls: deps.live });
      const page = await deps.store.listCallRecords(parseQuery(request.query));
      return { calls: page.calls, nextCursor: page.nextCursor };
    },
  );

  api.get(
    '/calls/:callSid',
    {
      config: { role: 'viewer' },
      schema: routeSchema(
        '/v1/calls/{callSid}',
        'get',
        "An ended call's record: turns, events, analysis",
        404,
      ),
    },
    async (request) => {
      const { callSid } = request.params;
      const record = await deps.store.getCallRecord(callSid);
      if (!record) throw new NotFoundError(`no call ${JSON.stringify(callSid.slice(0, 80))}`);
      return record;
    },
  );
}
