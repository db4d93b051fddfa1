// Ending every console session at once (docs/security.md, "Sessions and streams"), for an admin who
// suspects a cookie was taken: every instance refuses them from the next request on, and the
// streams they opened close within a second.
//   DELETE /sessions → 204, audited as sessions.end
import type { FastifyInstance } from 'fastify';
import type { Store } from '../store/store.js';
import { routeSchema } from './schemas.js';

export function registerEndSessionsRoute(scope: FastifyInstance, deps: { store: Store }): void {
  scope.delete(
    '/sessions',
    {
      config: { role: 'admin' },
      schema: routeSchema(
        '/v1/sessions',
        'delete',
        'End every console session and close the streams they opened',
      ),
    },
    async (request, reply) => {
      await deps.store.deleteAllSessions();
      await request.audit('sessions.end', 'all');
      await request.streams?.sweep();
      return reply.code(204).send();
    },
  );
}
