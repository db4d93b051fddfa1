// Every /v1 route declares a role and is refused to anyone below it: the walk covers every route the
// app registered, with no key, a bad key, and a key of each role.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { requireRoleDeclarations } from '../../src/admin/roles.js';
import { ROLES, type Role } from '../../src/store/access.js';
import type { TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, createKey, startAccessServer } from './access-helpers.js';

const SAMPLE_PARAMS: Record<string, string> = {
  callSid: 'CA-role-walk',
  id: 'cmp_rolewalk',
  number: '%2B15550100001',
};

function pathOf(url: string): string {
  return url.replace(/:(\w+)/g, (_m, name: string) => SAMPLE_PARAMS[name] ?? 'x');
}

const rank = (role: Role) => ROLES.indexOf(role);

describe('roles on every /v1 route', () => {
  let server: TestServer;
  const keys = {} as Record<Role, string>;

  beforeAll(async () => {
    server = await startAccessServer();
    for (const role of ROLES) keys[role] = await createKey(server, role);
  });
  afterAll(async () => {
    await server.close();
  });

  it('registers the routes the console uses, each with a role', () => {
    const routes = server.app.callbridge.adminRoutes.map((r) => `${r.method} ${r.url} ${r.role}`);
    expect(routes).toEqual(
      expect.arrayContaining([
        'POST /v1/session public',
        'GET /v1/keys admin',
        'GET /v1/audit admin',
        'GET /v1/calls viewer',
        'POST /v1/calls/:callSid/hangup operator',
        'POST /v1/calls operator',
        'POST /v1/dnc admin',
        'GET /v1/dnc viewer',
        'POST /v1/campaigns/:id/start operator',
      ]),
    );
    expect(server.app.callbridge.adminRoutes.length).toBeGreaterThan(25);
  });

  it('answers 401 without a key or with a bad one, 403 below the role, and lets the role through', async () => {
    const failures: string[] = [];
    for (const route of server.app.callbridge.adminRoutes) {
      const path = pathOf(route.url);
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : {};
      const expectThat = (who: string, status: number, ok: boolean) => {
        if (!ok) failures.push(`${route.method} ${route.url} (${route.role}) as ${who}: ${status}`);
      };
      if (route.role === 'public') {
        const answer = await call(server, route.method, path, { body });
        expectThat('nobody', answer.status, answer.status !== 401 && answer.status !== 403);
        continue;
      }
      const none = await call(server, route.method, path, { body });
      expectThat(
        'nobody',
        none.status,
        none.status === 401 && none.body.error?.code === 'CALLBRIDGE_UNAUTHORIZED',
      );
      const bad = await call(server, route.method, path, {
        bearer: 'cbk_0123456789abcdef_' + 'x'.repeat(43),
        body,
      });
      expectThat('a bad key', bad.status, bad.status === 401);
      for (const role of ROLES) {
        const answer = await call(server, route.method, path, { bearer: keys[role], body });
        if (route.method === 'GET' && route.url === '/v1/session') {
          // The console's own session: a bearer request has none to show, whatever its role.
          expectThat(role, answer.status, answer.status === 401);
        } else if (rank(role) < rank(route.role)) {
          expectThat(
            role,
            answer.status,
            answer.status === 403 && answer.body.error?.code === 'CALLBRIDGE_FORBIDDEN',
          );
        } else {
          expectThat(role, answer.status, answer.status !== 401 && answer.status !== 403);
        }
      }
      const admin = await call(server, route.method, path, { bearer: ADMIN_TOKEN, body });
      const sessionRead = route.method === 'GET' && route.url === '/v1/session';
      expectThat(
        'ADMIN_TOKEN',
        admin.status,
        sessionRead ? admin.status === 401 : admin.status !== 401 && admin.status !== 403,
      );
    }
    expect(failures).toEqual([]);
  });

  it('refuses to register a /v1 route that declares no role', async () => {
    // A route added without a declaration must not quietly be open to every key.
    const app = Fastify();
    try {
      await expect(
        app.register(async (scope) => {
          requireRoleDeclarations(scope, []);
          scope.get('/undeclared', async () => 'open');
        }),
      ).rejects.toThrow(/declares no role/);
    } finally {
      await app.close().catch(() => {});
    }
  });
});
