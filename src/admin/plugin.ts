// The admin API under /v1, behind the ADMIN_TOKEN bearer. With no token configured it is not
// mounted at all, so every /v1 path answers 404 like any unknown route.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { UnauthorizedError } from '../errors.js';

export type AdminRoutes = (scope: FastifyInstance) => void;

function bearerMatches(header: string | undefined, token: string): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  const given = Buffer.from(header.slice(7));
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function adminApi(adminToken: string, routes: AdminRoutes[]) {
  return async function plugin(scope: FastifyInstance): Promise<void> {
    scope.addHook('onRequest', async (req, reply) => {
      if (!bearerMatches(req.headers.authorization, adminToken)) {
        reply.header('www-authenticate', 'Bearer');
        throw new UnauthorizedError('the admin API needs Authorization: Bearer <ADMIN_TOKEN>');
      }
    });
    for (const register of routes) register(scope);
  };
}
