// Signing the console in and out (docs/console.md, "Sessions"). A session is kept in the store, so
// every instance of a fleet accepts it, and ends at its expiry, at sign-out or with its key.
//   POST   /session {key} → 200 {name, role, csrf} and the session cookie; 401 for a wrong key
//   GET    /session       → 200 {name, role, csrf} of the cookie's session; 401 without one
//   DELETE /session       → 204, the session ended and the cookie cleared
//   DELETE /sessions      → 204, every session ended (admin; sessions-end.ts)
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UnauthorizedError } from '../errors.js';
import type { SessionRecord } from '../store/access.js';
import type { Store } from '../store/store.js';
import { adminTokenFingerprint, randomToken, sha256Hex } from './credentials.js';
import { registerEndSessionsRoute } from './sessions-end.js';
import { principalOfBearer } from './plugin.js';
import { routeSchema, SESSION_COOKIE, typed } from './schemas.js';

export const SESSION_TTL_MS = 12 * 60 * 60_000;

export interface SessionDeps {
  store: Store;
  adminToken: string;
  now: () => number;
}

function cookieOptions(request: FastifyRequest) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'strict' as const,
    // request.protocol reads X-Forwarded-Proto only from proxies TRUST_PROXY names.
    secure: request.protocol === 'https',
  };
}

const view = (session: SessionRecord) => ({ name: session.name, role: session.role, csrf: session.csrf });

export function registerSessionRoutes(scope: FastifyInstance, deps: SessionDeps): void {
  const api = typed(scope);
  api.post(
    '/session',
    {
      config: { role: 'public' },
      schema: {
        ...routeSchema('/v1/session', 'post', 'Sign in with a key: sets the session cookie'),
        security: [],
      },
    },
    async (request, reply) => {
      const principal = await principalOfBearer(request.body.key, deps);
      if (!principal) throw new UnauthorizedError('the key is not valid');
      const value = randomToken();
      const nowMs = deps.now();
      const session: SessionRecord = {
        id: sha256Hex(value),
        keyId: principal.keyId,
        name: principal.name,
        role: principal.role,
        csrf: randomToken(),
        expiresAtMs: nowMs + SESSION_TTL_MS,
        // Bound to the credential it was made with: the key (by id), or this very ADMIN_TOKEN.
        ...(principal.keyId === null ? { tokenFingerprint: adminTokenFingerprint(deps.adminToken) } : {}),
      };
      await deps.store.saveSession(session);
      reply.setCookie(SESSION_COOKIE, value, { ...cookieOptions(request), maxAge: SESSION_TTL_MS / 1000 });
      return view(session);
    },
  );

  api.get(
    '/session',
    { config: { role: 'viewer' }, schema: routeSchema('/v1/session', 'get', "The cookie's session") },
    async (request) => {
      const session = request.principal?.session;
      if (!session) throw new UnauthorizedError('no session: sign in with POST /v1/session');
      return view(session);
    },
  );

  api.delete(
    '/session',
    { config: { role: 'viewer' }, schema: routeSchema('/v1/session', 'delete', 'Sign out') },
    async (request, reply) => {
      const session = request.principal?.session;
      if (session) await deps.store.deleteSession(session.id);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
      // The streams this session opened close with it.
      await request.streams?.sweep();
      return reply.code(204).send();
    },
  );

  registerEndSessionsRoute(scope, deps);
}
