// Answers Fastify gives before any route runs keep the project's error format and never echo the
// request: a 414 once answered Fastify's own JSON with the whole URL in it, tokens and all.
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './helpers/server.js';

let server: TestServer;

beforeEach(async () => {
  server = await startServer({ AGENT_URL: 'ws://127.0.0.1:9', AGENT_API_KEY: 'key' });
});

afterEach(async () => {
  await server.close();
});

const SECRETISH = 'do-not-echo-this-segment';

/** Sends raw bytes and reads whatever comes back until the server closes the connection. */
function raw(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(new URL(server.baseUrl).port), '127.0.0.1', () => socket.write(text));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      out += chunk;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

function bodyOf(response: string): unknown {
  return JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));
}

describe('errors before any route', () => {
  it('answers an over-long path segment with 414 in the error format, without the URL', async () => {
    const res = await fetch(`${server.baseUrl}/calls/${SECRETISH}${'a'.repeat(5000)}/events`);
    const text = await res.text();
    expect(res.status).toBe(414);
    expect(JSON.parse(text)).toEqual({
      error: { code: 'CALLBRIDGE_URI_TOO_LONG', message: 'a path segment is too long' },
    });
    expect(text).not.toContain(SECRETISH);
  });

  it('answers a malformed escape in the URL with 400 in the error format, without the URL', async () => {
    const res = await fetch(`${server.baseUrl}/calls/${SECRETISH}%E0%A4%A/events`);
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(JSON.parse(text)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_REQUEST', message: 'the request URL is malformed' },
    });
    expect(text).not.toContain(SECRETISH);
  });

  it('answers a malformed JSON body with 400 in the error format', async () => {
    const res = await fetch(`${server.baseUrl}/carriers/twilio/voice`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"CallSid":',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('CALLBRIDGE_BAD_REQUEST');
  });

  it('answers bytes that are not HTTP with 400 in the error format', async () => {
    const response = await raw(
      `POST /carriers/twilio/voice HTTP/1.1\r\nHost: x\r\nContent-Length: ${SECRETISH}\r\n\r\n`,
    );
    expect(response).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bodyOf(response)).toEqual({
      error: { code: 'CALLBRIDGE_BAD_REQUEST', message: 'the request is not valid HTTP' },
    });
    expect(response).not.toContain(SECRETISH);
  });

  it('answers headers over the size limit with 431 in the error format', async () => {
    const response = await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(response).toMatch(/^HTTP\/1\.1 431 /);
    expect(bodyOf(response)).toEqual({
      error: { code: 'CALLBRIDGE_HEADERS_TOO_LARGE', message: 'the request headers are too large' },
    });
  });
});
