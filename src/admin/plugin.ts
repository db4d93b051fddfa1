// The admin API under /v1 (docs/console.md). Every request proves who it is with a bearer key
// (ADMIN_TOKEN or an API key) or the console's session cookie; every route declares the least role
// it needs (roles.ts) and the scope refuses a route that does not. Changes made with the cookie must
// carry the session's anti-forgery header. With no ADMIN_TOKEN configured the API is not mounted.
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { bearerToken, constantTimeEqual } from '../auth.js';
import { CsrfError, ForbiddenError, UnauthorizedError } from '../errors.js';
import type { Store } from '../store/store.js';
import { adminTokenFingerprint, parseApiKey, secretMatches, sha256Hex } from './credentials.js';
import { OpenStreams } from './open-streams.js';
import { ADMIN_TOKEN_NAME, type AuditAction, type Principal } from './principal.js';
import { type DeclaredRoute, requireRoleDeclarations, roleAllows } from './roles.js';
import { SESSION_COOKIE, CSRF_HEADER } from './schemas.js';
import { adminValidator } from './validation.js';

export type AdminRoutes = (scope: FastifyInstance) => void;

export interface AdminApiDeps {
  adminToken: string;
  store: Store;
  now: () => number;
  /** Filled with every route of the scope and its declared role as they register. */
  catalogue?: DeclaredRoute[];
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export async function principalOfBearer(
  token: string,
  deps: Pick<AdminApiDeps, 'adminToken' | 'store'>,
): Promise<Principal | null> {
  if (constantTimeEqual(token, deps.adminToken)) {
    return { name: ADMIN_TOKEN_NAME, role: 'admin', keyId: null, via: 'bearer', session: null };
  }
  const parsed = parseApiKey(token);
  if (!parsed) return null;
  const key = await deps.store.getApiKey(parsed.id);
  if (!key || !secretMatches(parsed.secret, key)) return null;
  return { name: key.name, role: key.role, keyId: key.id, via: 'bearer', session: null };
}

/**
 * The session of a cookie, if it still holds: not expired, signed out or ended, and its credential
 * still valid. Deleting a key deletes its sessions, and checking the key as well closes any gap
 * between the two; a session made with ADMIN_TOKEN holds only while the server runs with that token.
 */
async function liveSession(id: string, deps: Pick<AdminApiDeps, 'adminToken' | 'store'>) {
  const session = await deps.store.getSession(id);
  if (!session) return null;
  if (session.keyId !== null) return (await deps.store.getApiKey(session.keyId)) ? session : null;
  const fingerprint = session.tokenFingerprint ?? '';
  return constantTimeEqual(fingerprint, adminTokenFingerprint(deps.adminToken)) ? session : null;
}

async function principalOfCookie(value: string, deps: AdminApiDeps): Promise<Principal | null> {
  const session = await liveSession(sha256Hex(value), deps);
  if (!session) return null;
  return { name: session.name, role: session.role, keyId: session.keyId, via: 'cookie', session };
}

/** Whether the credential a request proved itself with still holds (streams are held to it). */
export async function credentialHolds(
  principal: Principal,
  deps: Pick<AdminApiDeps, 'adminToken' | 'store'>,
): Promise<boolean> {
  if (principal.via === 'cookie' && principal.session) {
    return (await liveSession(principal.session.id, deps)) !== null;
  }
  if (principal.keyId === null) return true;
  return (await deps.store.getApiKey(principal.keyId)) !== null;
}

async function authenticate(req: FastifyRequest, deps: AdminApiDeps): Promise<Principal> {
  const header = req.headers.authorization;
  if (header !== undefined) {
    const token = bearerToken(header);
    const principal = token === null ? null : await principalOfBearer(token, deps);
    if (!principal) {
      throw new UnauthorizedError('the admin API needs Authorization: Bearer <API key or ADMIN_TOKEN>');
    }
    return principal;
  }
  const value = req.cookies[SESSION_COOKIE];
  const principal = value ? await principalOfCookie(value, deps) : null;
  if (!principal) {
    throw new UnauthorizedError('sign in (POST /v1/session) or send Authorization: Bearer <key>');
  }
  if (!SAFE_METHODS.has(req.method)) {
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !constantTimeEqual(sent, principal.session!.csrf)) {
      throw new CsrfError(`a change made with the session cookie needs the ${CSRF_HEADER} header`);
    }
  }
  return principal;
}

export function adminApi(deps: AdminApiDeps, routes: AdminRoutes[]) {
  return async function plugin(scope: FastifyInstance): Promise<void> {
    await scope.register(cookie);
    requireRoleDeclarations(scope, deps.catalogue ?? []);
    // Route schemas (src/api) document the API (/openapi.json) and check every query string, path
    // parameter and body before a handler runs.
    scope.setValidatorCompiler(adminValidator);
    // Response schemas are documentation: the handlers' answers go out as they are.
    scope.setSerializerCompiler(() => (data) => JSON.stringify(data));

    // Every stream a request of this scope opens is held to its credential (open-streams.ts).
    const streams = new OpenStreams((principal) => credentialHolds(principal, deps));
    scope.addHook('onClose', async () => streams.close());
    scope.decorateRequest('principal', null);
    scope.decorateRequest('streams', null);
    scope.decorateRequest(
      'audit',
      async function audit(
        this: FastifyRequest,
        action: AuditAction,
        target: string,
        detail?: Record<string, unknown>,
      ) {
        const who = this.principal;
        if (!who) return;
        try {
          await deps.store.appendAudit({
            atMs: deps.now(),
            keyId: who.keyId,
            keyName: who.name,
            role: who.role,
            action,
            target,
            ...(detail ? { detail } : {}),
          });
        } catch (err) {
          this.log.error({ err: (err as Error).message, action, target }, 'could not write the audit entry');
        }
      },
    );
    scope.addHook('onRequest', async (req, reply) => {
      req.streams = streams;
      const needed = req.routeOptions.config.role;
      if (needed === 'public') return;
      let principal: Principal;
      try {
        principal = await authenticate(req, deps);
      } catch (err) {
        if ((err as { statusCode?: number }).statusCode === 401) reply.header('www-authenticate', 'Bearer');
        throw err;
      }
      // Routes without a declaration never register (roles.ts); a 404 has no route, so needs admin.
      if (!roleAllows(principal.role, needed ?? 'admin')) {
        throw new ForbiddenError(`this needs the ${needed ?? 'admin'} role; the key is ${principal.role}`);
      }
      req.principal = principal;
    });
    for (const register of routes) register(scope);
  };
}
