// The audit log, for admins (docs/console.md, "Audit log"):
//   GET /audit[?limit=&cursor=] → 200 {"entries": [{id, at, keyId, keyName, role, action, target, detail?}],
//                                      "nextCursor"}, newest first
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMITS } from '../api/common.js';
import type { Store } from '../store/store.js';
import { routeSchema, typed } from './schemas.js';

export function registerAuditRoutes(scope: FastifyInstance, deps: { store: Store }): void {
  typed(scope).get(
    '/audit',
    {
      config: { role: 'admin' },
      schema: routeSchema(
        '/v1/audit',
        'get',
        'Every control action, with the key that made it, newest first',
      ),
    },
    async (request) => {
      const { limit, cursor } = request.query;
      const page = await deps.store.listAudit({
        limit: limit ?? PAGE_LIMITS.audit.fallback,
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
