// Console sessions: the cookie's attributes, the anti-forgery header on every cookie change, the
// session kept in the store (any instance accepts it) and ended with its key.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import type { TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, createKey, signIn, startAccessServer } from './access-helpers.js';

const withRedis = await redisAvailable();
const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});
async function start(env: Record<string, string> = {}) {
  const server = await startAccessServer(env);
  servers.push(server);
  return server;
}

const attributes = (setCookie: string) =>
  setCookie
    .split(';')
    .slice(1)
    .map((part) => part.trim().split('=')[0]!.toLowerCase());

describe('console sessions', () => {
  it('signs in with a key: HttpOnly, SameSite=Strict, Path=/ cookie, not Secure over plain http', async () => {
    const server = await start();
    const key = await createKey(server, 'viewer', 'night shift');
    const answer = await call(server, 'POST', '/v1/session', { body: { key } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ name: 'night shift', role: 'viewer', csrf: expect.any(String) });
    const setCookie = answer.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^callbridge_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toMatch(/; HttpOnly/);
    expect(setCookie).toMatch(/; SameSite=Strict/);
    expect(setCookie).toMatch(/; Path=\//);
    expect(attributes(setCookie)).not.toContain('secure');
    // The cookie names no key and no role: it is a random handle to the stored session.
    expect(setCookie).not.toContain(key);

    const cookie = setCookie.split(';')[0]!;
    const again = await call(server, 'GET', '/v1/session', { cookie });
    expect(again.body).toEqual(answer.body);
    expect((await call(server, 'GET', '/v1/calls', { cookie })).status).toBe(200);
  });

  it('refuses a wrong key with 401 and sets no cookie', async () => {
    const server = await start();
    for (const key of ['wrong', `cbk_0123456789abcdef_${'a'.repeat(43)}`, ADMIN_TOKEN.slice(0, -1)]) {
      const answer = await call(server, 'POST', '/v1/session', { body: { key } });
      expect(answer.status).toBe(401);
      expect(answer.headers.get('set-cookie')).toBeNull();
    }
    expect((await call(server, 'POST', '/v1/session', { body: { nokey: 1 } })).status).toBe(400);
    expect((await call(server, 'GET', '/v1/session')).status).toBe(401);
    expect((await call(server, 'GET', '/v1/calls', { cookie: 'callbridge_session=forged' })).status).toBe(
      401,
    );
  });

  it('marks the cookie Secure behind an https proxy TRUST_PROXY names, and only then', async () => {
    const trusted = await start({ TRUST_PROXY: '127.0.0.1' });
    const viaProxy = await call(trusted, 'POST', '/v1/session', {
      body: { key: ADMIN_TOKEN },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(attributes(viaProxy.headers.get('set-cookie')!)).toContain('secure');

    // Anyone can send X-Forwarded-Proto; without a trusted proxy it is not believed.
    const untrusted = await start();
    const forged = await call(untrusted, 'POST', '/v1/session', {
      body: { key: ADMIN_TOKEN },
      headers: { 'x-forwarded-proto': 'https' },
    });
    expect(attributes(forged.headers.get('set-cookie')!)).not.toContain('secure');
  });

  it('refuses a change made with the cookie without the session anti-forgery header', async () => {
    // Another site can make the browser send the cookie, never read the token it must echo.
    const server = await start();
    const { cookie, csrf } = await signIn(server, await createKey(server, 'admin'));
    const missing = await call(server, 'POST', '/v1/calls/CA-none/hangup', { cookie });
    expect(missing.status).toBe(403);
    expect(missing.body.error?.code).toBe('CALLBRIDGE_CSRF');
    const wrong = await call(server, 'POST', '/v1/dnc', {
      cookie,
      csrf: `${csrf.slice(0, -1)}x`,
      body: { numbers: ['+12125550123'] },
    });
    expect(wrong.body.error?.code).toBe('CALLBRIDGE_CSRF');
    const otherSession = await signIn(server, ADMIN_TOKEN);
    const crossed = await call(server, 'DELETE', '/v1/dnc/%2B12125550123', {
      cookie,
      csrf: otherSession.csrf,
    });
    expect(crossed.body.error?.code).toBe('CALLBRIDGE_CSRF');
    // Nothing was listed by the refused requests.
    expect((await call(server, 'GET', '/v1/dnc', { bearer: ADMIN_TOKEN })).body.numbers).toEqual([]);

    const right = await call(server, 'POST', '/v1/dnc', {
      cookie,
      csrf,
      body: { numbers: ['+12125550123'] },
    });
    expect(right.status).toBe(200);
    expect(right.body.added).toBe(1);
    // Reads need no header, and bearer requests never do.
    expect((await call(server, 'GET', '/v1/dnc', { cookie })).status).toBe(200);
    const bearer = await call(server, 'DELETE', '/v1/dnc/%2B12125550123', { bearer: ADMIN_TOKEN });
    expect(bearer.status).toBe(204);
  });

  it('ends the session at sign-out and when its key is deleted', async () => {
    const server = await start();
    const created = await call(server, 'POST', '/v1/keys', {
      bearer: ADMIN_TOKEN,
      body: { name: 'temp', role: 'operator' },
    });
    const key = created.body.key as string;
    const first = await signIn(server, key);
    const second = await signIn(server, key);

    const out = await call(server, 'DELETE', '/v1/session', { cookie: first.cookie, csrf: first.csrf });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^callbridge_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await call(server, 'GET', '/v1/session', { cookie: first.cookie })).status).toBe(401);
    expect((await call(server, 'GET', '/v1/session', { cookie: second.cookie })).status).toBe(200);

    const deleted = await call(server, 'DELETE', `/v1/keys/${created.body.id as string}`, {
      bearer: ADMIN_TOKEN,
    });
    expect(deleted.status).toBe(204);
    expect((await call(server, 'GET', '/v1/calls', { cookie: second.cookie })).status).toBe(401);
    expect((await call(server, 'GET', '/v1/calls', { bearer: key })).status).toBe(401);
  });

  it.skipIf(!withRedis)('accepts a session signed in on another instance sharing Redis', async () => {
    const prefix = `callbridge-test:${randomUUID()}:`;
    try {
      const env = { REDIS_URL, REDIS_KEY_PREFIX: prefix };
      const a = await start({ ...env, INSTANCE_ID: 'a' });
      const b = await start({ ...env, INSTANCE_ID: 'b' });
      const { cookie } = await signIn(a, await createKey(a, 'viewer', 'shared'));
      const onB = await call(b, 'GET', '/v1/session', { cookie });
      expect(onB.status).toBe(200);
      expect(onB.body.name).toBe('shared');
    } finally {
      for (const server of servers.splice(0)) await server.close();
      await deleteKeys(prefix);
    }
  });
});
