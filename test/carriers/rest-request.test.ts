import { afterEach, describe, expect, it } from 'vitest';
import { CarrierApiError } from '../../src/carriers/carrier-api-error.js';
import { restRequest } from '../../src/carriers/rest-request.js';
import { type FakeCarrierApi, startFakeCarrierApi } from '../helpers/fake-carrier-api.js';

let api: FakeCarrierApi;

afterEach(async () => {
  await api.close();
});

const request = (url: string, timeoutMs = 1000) =>
  restRequest({ carrier: 'acme', operation: 'do it', method: 'GET', url, headers: {}, timeoutMs });

describe('carrier REST request', () => {
  it('reads a JSON body, and leaves a body that is not JSON undefined', async () => {
    api = await startFakeCarrierApi((_req, res) => res.end('{"a":1}'));
    expect(await request(api.url)).toEqual({ status: 200, body: { a: 1 } });
    api.respond((_req, res) => res.end('<html>'));
    expect(await request(api.url)).toEqual({ status: 200, body: undefined });
  });

  it('does not follow redirects, which could carry the credentials elsewhere', async () => {
    api = await startFakeCarrierApi((_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      res.end();
    });
    expect((await request(api.url)).status).toBe(302);
    expect(api.requests).toHaveLength(1);
  });

  it('reads at most 256 KiB of an answer', async () => {
    // Valid JSON, but cut at the bound it no longer parses.
    api = await startFakeCarrierApi((_req, res) =>
      res.end(JSON.stringify({ a: 'x'.repeat(2 * 1024 * 1024) })),
    );
    expect(await request(api.url)).toEqual({ status: 200, body: undefined });
  });

  it('bounds a body that trickles in by the same timeout', async () => {
    api = await startFakeCarrierApi((_req, res) => {
      res.writeHead(200);
      res.write('{');
    });
    const err = await request(api.url, 150).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CarrierApiError);
    expect(err).toMatchObject({ retryable: true, message: 'acme do it: timed out after 150 ms' });
  });
});
