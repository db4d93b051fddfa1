// Every query string and body of /v1 is checked against its schema from src/api before the route
// runs: unknown or repeated parameters and malformed bodies are refused with a 400 naming them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, startAccessServer } from './access-helpers.js';

describe('checked before a route runs', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAccessServer();
  });
  afterAll(async () => {
    await server.close();
  });
  const refusal = async (method: string, path: string, body?: unknown) => {
    const answer = await call(server, method, path, { bearer: ADMIN_TOKEN, body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(400);
    expect(answer.body.error?.code).toBe('CALLBRIDGE_BAD_REQUEST');
    return answer.body.error!.message;
  };

  it.each([
    ['/v1/calls?sort=newest', 'unknown query parameter "sort"'],
    ['/v1/audit?order=asc', 'unknown query parameter "order"; known: limit, cursor'],
    ['/v1/webhooks/dead-letters?cursor=x', 'unknown query parameter "cursor"; known: limit'],
    ['/v1/dnc?q=1&q=2', 'q may be given once'],
    ['/v1/calls?live=maybe', 'live must be true or false'],
    ['/v1/calls?direction=sideways', 'direction must be inbound or outbound'],
    ['/v1/calls?number=12125550100', 'number must be an E.164 number'],
    ['/v1/audit?limit=201', 'limit must be an integer from 1 to 200'],
    ['/v1/dnc?q=abc', 'q must be digits of a number'],
  ])('refuses GET %s', async (path, message) => {
    expect(await refusal('GET', path)).toContain(message);
  });

  it('reads numbers from their text: a valid limit pages', async () => {
    const answer = await call(server, 'GET', '/v1/audit?limit=1', { bearer: ADMIN_TOKEN });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ entries: expect.any(Array) });
  });

  it('refuses a transfer body that is not {"to": a number or SIP URI}', async () => {
    expect(await refusal('POST', '/v1/calls/CA1/transfer', { to: 'somewhere' })).toBe(
      'to must be an E.164 number (+15550100) or a sip: URI',
    );
    expect(await refusal('POST', '/v1/calls/CA1/transfer', { to: '+15550100', via: 'x' })).toBe(
      'unknown field "via"',
    );
  });
});
