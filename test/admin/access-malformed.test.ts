// Malformed requests to the new routes are answered 400/401/404 in the API's error format: none
// crashes the server or echoes a secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, startAccessServer } from './access-helpers.js';

let server: TestServer;
beforeAll(async () => {
  server = await startAccessServer();
});
afterAll(async () => {
  await server.close();
});

describe('malformed requests', () => {
  it.each([
    ['a key without a name', 'POST', '/v1/keys', { role: 'viewer' }, 400],
    ['a key with an unknown role', 'POST', '/v1/keys', { name: 'x', role: 'root' }, 400],
    ['a key with an extra field', 'POST', '/v1/keys', { name: 'x', role: 'admin', secret: 'mine' }, 400],
    ['a key with a huge name', 'POST', '/v1/keys', { name: 'x'.repeat(81), role: 'admin' }, 400],
    ['a key given as a list', 'POST', '/v1/keys', [{ name: 'x', role: 'admin' }], 400],
    ['an unknown key', 'DELETE', '/v1/keys/0123456789abcdef', undefined, 404],
    ['a search that is not digits', 'GET', '/v1/dnc?q=abc', undefined, 400],
    ['a search given twice', 'GET', '/v1/dnc?q=1&q=2', undefined, 400],
    ['an unknown listing parameter', 'GET', '/v1/dnc?sort=asc', undefined, 400],
    ['an audit page too large', 'GET', '/v1/audit?limit=100000', undefined, 400],
    ['a listen on a malformed call id', 'GET', '/v1/calls/bad%20sid/listen', undefined, 400],
  ])('answers %s', async (_name, method, path, body, status) => {
    const answer = await call(server, method, path, { bearer: ADMIN_TOKEN, body });
    expect(answer.status).toBe(status);
    expect(answer.body.error?.code).toMatch(/^CALLBRIDGE_/);
    expect(JSON.stringify(answer.body)).not.toContain(ADMIN_TOKEN);
  });

  it('refuses a sign-in body that is not a key, and a cookie that is garbage', async () => {
    for (const body of [null, 'key', { key: 7 }, { key: '' }, { key: 'x'.repeat(600) }]) {
      const answer = await call(server, 'POST', '/v1/session', { body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
    }
    for (const cookie of [
      'callbridge_session=',
      'callbridge_session=%zz',
      `callbridge_session=${'a'.repeat(4000)}`,
    ]) {
      expect((await call(server, 'GET', '/v1/session', { cookie })).status).toBe(401);
    }
    const twice = await call(server, 'GET', '/v1/calls', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}, Bearer x` },
    });
    expect(twice.status).toBe(401);
    // Still serving.
    expect((await call(server, 'GET', '/v1/keys', { bearer: ADMIN_TOKEN })).status).toBe(200);
  });
});
