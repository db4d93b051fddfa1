// The role each /v1 route needs, declared on the route itself (`{ config: { role: 'operator' } }`)
// and checked by the admin scope before anything else runs (docs/console.md, "Roles").
import type { FastifyInstance } from 'fastify';
import { ROLES, type Role } from '../store/access.js';

/** `public`: reachable without a key (signing in). */
export type RouteRole = Role | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The least role that may call the route; every /v1 route declares one. */
    role?: RouteRole;
  }
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** Whether `held` is `needed` or above it: viewer < operator < admin. */
export function roleAllows(held: Role, needed: Role): boolean {
  return ROLES.indexOf(held) >= ROLES.indexOf(needed);
}

/**
 * Refuses, at registration, a route of the scope that declares no role: a route added without one
 * would otherwise be open to whichever check its author forgot. HEAD twins of GET routes inherit
 * the GET's config.
 */
export function requireRoleDeclarations(scope: FastifyInstance, catalogue: DeclaredRoute[]): void {
  scope.addHook('onRoute', (route) => {
    const role = (route.config as { role?: unknown } | undefined)?.role;
    if (role !== 'public' && !isRole(role)) {
      throw new Error(
        `route ${String(route.method)} ${route.url} declares no role: add { config: { role: 'viewer' | 'operator' | 'admin' | 'public' } }`,
      );
    }
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') catalogue.push({ method, url: route.url, role });
    }
  });
}

/** A /v1 route and the role it declared, as registered (the role-walk test reads these). */
export interface DeclaredRoute {
  method: string;
  url: string;
  role: RouteRole;
}
