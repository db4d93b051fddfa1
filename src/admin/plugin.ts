// The admin API under /v1, behind the ADMIN_TOKEN bearer. With no token configured it is not
// mounted at all, so every /v1 path answers 404 like any unknown route.
import type { FastifyInstance } from 'fastify';
import { bearerToken, constantTimeEqual } from '../auth.js';
import { UnauthorizedError } from '../errors.js';

export type AdminRoutes = (scope: FastifyInstance) => void;

function bearerMatches(header: string | undefined, token: string): boolean {
  const given = bearerToken(header);
  return given !== null && constantTimeEqual(given, token);
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
