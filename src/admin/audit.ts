// The audit log, for admins (docs/console.md, "Audit log"):
//   GET /audit[?limit=&cursor=] → 200 {"entries": [{id, at, keyId, keyName, role, action, target, detail?}],
//                                      "nextCursor"}, newest first
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.js';
import { cursorParam, knownParams, limitParam, type RawQuery } from './query-params.js';
import { AuditPage, errors, PageQuery } from './schemas.js';

export function registerAuditRoutes(scope: FastifyInstance, deps: { store: Store }): void {
  scope.get<{ Querystring: RawQuery }>(
    '/audit',
    {
      config: { role: 'admin' },
      schema: {
        summary: 'Every control action, with the key that made it, newest first',
        querystring: PageQuery,
        response: { 200: AuditPage, ...errors() },
      },
    },
    async (request) => {
      knownParams(request.query, ['limit', 'cursor']);
      const cursor = cursorParam(request.query);
      const page = await deps.store.listAudit({
        limit: limitParam(request.query, 50, 200),
        ...(cursor ? { cursor } : {}),
      });
      return {
        entries: page.entries.map(({ atMs, ...entry }) => ({
          ...entry,
          keyId: entry.keyId ?? null,
          at: new Date(atMs).toISOString(),
        })),
        nextCursor: page.nextCursor,
      };
    },
  );
}
