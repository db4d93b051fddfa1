import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CarrierApiError } from '../../src/errors.js';
import { carrierRequest } from '../../src/carriers/carrier-request.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function serve(listener: RequestListener): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits += 1;
    listener(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits: () => hits };
}

const request = (url: string, timeoutMs = 1000) =>
  carrierRequest({ carrier: 'acme', operation: 'do it', method: 'GET', url, headers: {}, timeoutMs });

describe('carrier REST request', () => {
  it('reads a JSON body, and leaves a body that is not JSON undefined', async () => {
    const json = await serve((_req, res) => res.end('{"a":1}'));
    expect(await request(json.url)).toEqual({ status: 200, body: { a: 1 } });
    const html = await serve((_req, res) => res.end('<html>'));
    expect(await request(html.url)).toEqual({ status: 200, body: undefined });
  });

  it('does not follow redirects, which could carry the credentials elsewhere', async () => {
    const api = await serve((_req, res) => {
      res.writeHead(302, { location: '/elsewhere' });
      res.end();
    });
    expect((await request(api.url)).status).toBe(302);
    expect(api.hits()).toBe(1);
  });

  it('does not parse an answer far larger than any carrier sends', async () => {
    const api = await serve((_req, res) => res.end(JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) })));
    expect(await request(api.url)).toEqual({ status: 200, body: undefined });
  });

  it('bounds a body that trickles in by the same timeout', async () => {
    const api = await serve((_req, res) => {
      res.writeHead(200);
      res.write('{');
    });
    const err = await request(api.url, 150).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarrierApiError);
    expect(err).toMatchObject({
      carrier: 'acme',
      retryable: true,
      message: 'acme do it: timed out after 150 ms',
    });
  });
});
