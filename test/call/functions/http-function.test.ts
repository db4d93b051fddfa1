// Profile HTTP functions against a real HTTP server on an ephemeral port: the signed request, and
// every failure turned into an error content the agent can recover from.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.js';
import {
  HTTP_FUNCTION_MAX_CONTENT_BYTES,
  runHttpFunction,
  verifyCallbridgeSignature,
} from '../../../src/call/functions/http-function.js';
import type { HttpFunction } from '../../../src/config/types.js';

interface Received {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

let server: http.Server;
let baseUrl: string;
let received: Received[];
let handler: Handler;

beforeEach(async () => {
  received = [];
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"shipped"}');
  };
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const CALL = { callSid: 'CA123', from: '+15005550006', to: '+15005550001', profile: 'support' };
const SECRET = 'fn-secret-0123456789';

function lookupOrder(overrides: Partial<HttpFunction> = {}): HttpFunction {
  return {
    name: 'lookup_order',
    description: 'Looks up an order',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } } },
    url: `${baseUrl}/functions/lookup_order`,
    secret: SECRET,
    timeoutMs: 3000,
    ...overrides,
  };
}

/** The receiver's check, written from the header description rather than with the module's helper. */
function receiverAccepts(r: Received, secret: string): boolean {
  const timestamp = String(r.headers['x-callbridge-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${r.body}`).digest('hex')}`;
  const got = Buffer.from(String(r.headers['x-callbridge-signature']));
  return got.length === expected.length && timingSafeEqual(got, Buffer.from(expected));
}

describe('runHttpFunction', () => {
  it('POSTs the call, name and parsed arguments, signed over timestamp and raw body', async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = await runHttpFunction(lookupOrder(), CALL, '{"orderId":"A-17"}');

    expect(result).toMatchObject({ outcome: 'ok', content: '{"status":"shipped"}' });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    const [req] = received as [Received];
    expect(req.method).toBe('POST');
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual({
      call: CALL,
      name: 'lookup_order',
      arguments: { orderId: 'A-17' },
    });
    const timestamp = Number(req.headers['x-callbridge-timestamp']);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    expect(timestamp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(req.headers['x-callbridge-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(receiverAccepts(req, SECRET)).toBe(true);
    expect(receiverAccepts(req, 'another-secret')).toBe(false);
  });

  it('sends no signature header when the function has no secret', async () => {
    const result = await runHttpFunction(lookupOrder({ secret: undefined }), CALL, '{}');
    expect(result.outcome).toBe('ok');
    expect(received[0]?.headers['x-callbridge-signature']).toBeUndefined();
    expect(received[0]?.headers['x-callbridge-timestamp']).toMatch(/^\d+$/);
  });

  it('signs with the injected clock', async () => {
    let init: RequestInit | undefined;
    const fakeFetch = (async (_url: string | URL | Request, i?: RequestInit) => {
      init = i;
      return new Response('{"ok":1}', { status: 200 });
    }) as typeof fetch;
    const result = await runHttpFunction(lookupOrder(), CALL, '{}', {
      fetch: fakeFetch,
      nowMs: () => 1_700_000_000_999,
    });
    expect(result).toEqual({ outcome: 'ok', content: '{"ok":1}', durationMs: 0 });
    const headers = init?.headers as Record<string, string>;
    expect(headers['x-callbridge-timestamp']).toBe('1700000000');
    expect(
      verifyCallbridgeSignature(
        SECRET,
        headers['x-callbridge-timestamp'],
        headers['x-callbridge-signature'],
        String(init?.body),
        1_700_000_000_999,
      ),
    ).toBe(true);
  });

  it('answers an error content with outcome timeout when the receiver never answers', async () => {
    handler = () => {}; // holds the request open
    const result = await runHttpFunction(lookupOrder({ timeoutMs: 200 }), CALL, '{"orderId":"A-17"}');
    expect(result.outcome).toBe('timeout');
    expect(JSON.parse(result.content)).toEqual({
      error: 'lookup_order timed out after 200 ms; tell the caller you could not check right now',
    });
  });

  it('times out a receiver that stalls in the middle of its answer body', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"status":');
    };
    const result = await runHttpFunction(lookupOrder({ timeoutMs: 200 }), CALL, '{}');
    expect(result.outcome).toBe('timeout');
  });

  it('turns a 500 into an error content without the receiver body', async () => {
    handler = (_req, res) => {
      res.writeHead(500);
      res.end('stack trace with internal details');
    };
    const result = await runHttpFunction(lookupOrder(), CALL, '{}');
    expect(result.outcome).toBe('error');
    expect(JSON.parse(result.content).error).toContain('lookup_order failed (HTTP 500)');
    expect(result.content).not.toContain('internal details');
  });

  it('does not follow a redirect with the signed request', async () => {
    handler = (_req, res) => {
      res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' });
      res.end();
    };
    const result = await runHttpFunction(lookupOrder(), CALL, '{}');
    expect(result.outcome).toBe('error');
    expect(result.content).toContain('HTTP 302');
    expect(received).toHaveLength(1);
  });

  it('turns a refused connection into an error content', async () => {
    const port = await freePort();

    const result = await runHttpFunction(lookupOrder({ url: `http://127.0.0.1:${port}/x` }), CALL, '{}');
    expect(result.outcome).toBe('error');
    expect(JSON.parse(result.content).error).toContain('lookup_order could not be reached');
  });

  it.each([
    ['not JSON', '{orderId: A-17'],
    ['an array', '[1,2]'],
    ['a string', '"A-17"'],
    ['null', 'null'],
  ])('refuses arguments that are %s without sending a request', async (_label, args) => {
    const result = await runHttpFunction(lookupOrder(), CALL, args);
    expect(result.outcome).toBe('bad_arguments');
    expect(JSON.parse(result.content).error).toContain('lookup_order was called with arguments');
    expect(received).toHaveLength(0);
  });

  it('treats empty arguments as none', async () => {
    const result = await runHttpFunction(lookupOrder(), CALL, '');
    expect(result.outcome).toBe('ok');
    expect(JSON.parse(received[0]!.body).arguments).toEqual({});
  });

  it('gives the agent something to read for an empty 2xx answer', async () => {
    handler = (_req, res) => {
      res.writeHead(204);
      res.end();
    };
    const result = await runHttpFunction(lookupOrder(), CALL, '{}');
    expect(result).toMatchObject({ outcome: 'ok', content: '{"ok":true}' });
  });

  it('caps a large answer at a character boundary and says it was cut', async () => {
    // 3-byte characters, so the byte cap falls inside one unless the cut steps back.
    const big = '€'.repeat(HTTP_FUNCTION_MAX_CONTENT_BYTES);
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(big);
    };
    const result = await runHttpFunction(lookupOrder(), CALL, '{}');
    expect(result.outcome).toBe('ok');
    expect(result.content.endsWith(' …[truncated]')).toBe(true);
    const kept = result.content.slice(0, -' …[truncated]'.length);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(HTTP_FUNCTION_MAX_CONTENT_BYTES);
    expect(Buffer.byteLength(kept)).toBeGreaterThan(HTTP_FUNCTION_MAX_CONTENT_BYTES - 3);
    expect(kept).toMatch(/^€+$/);
  });

  it('passes an answer at the cap through untouched', async () => {
    const exact = 'a'.repeat(HTTP_FUNCTION_MAX_CONTENT_BYTES);
    handler = (_req, res) => res.end(exact);
    const result = await runHttpFunction(lookupOrder(), CALL, '{}');
    expect(result.content).toBe(exact);
  });
});

describe('verifyCallbridgeSignature', () => {
  const body = '{"call":{},"name":"x","arguments":{}}';
  const nowMs = 1_700_000_000_000;
  const ts = String(nowMs / 1000);
  const sign = (t: string, b: string) =>
    `sha256=${createHmac('sha256', SECRET).update(`${t}.${b}`).digest('hex')}`;

  it('accepts a fresh signature over the raw body, as a string or bytes', () => {
    expect(verifyCallbridgeSignature(SECRET, ts, sign(ts, body), body, nowMs)).toBe(true);
    expect(verifyCallbridgeSignature(SECRET, ts, sign(ts, body), Buffer.from(body), nowMs)).toBe(true);
  });

  it('rejects a changed body, a wrong secret and a malformed header', () => {
    expect(verifyCallbridgeSignature(SECRET, ts, sign(ts, body), `${body} `, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature('other', ts, sign(ts, body), body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, ts, sign(ts, body).slice(7), body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, ts, undefined, body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, undefined, sign(ts, body), body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, '17e8', sign('17e8', body), body, nowMs)).toBe(false);
  });

  it('rejects a replay outside the tolerance, on either side of the clock', () => {
    const old = String(nowMs / 1000 - 301);
    const future = String(nowMs / 1000 + 301);
    expect(verifyCallbridgeSignature(SECRET, old, sign(old, body), body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, future, sign(future, body), body, nowMs)).toBe(false);
    expect(verifyCallbridgeSignature(SECRET, old, sign(old, body), body, nowMs, 600)).toBe(true);
  });
});
