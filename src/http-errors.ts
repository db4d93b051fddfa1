// Errors Fastify answers before any route or error handler runs: a request the HTTP parser
// cannot read, and a URL the router cannot (a bad escape, an over-long segment). They get the
// error format of every other answer, and never echo the request: a URL may hold a token.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { codeForStatus } from './errors.js';

function errorBody(status: number, message: string): string {
  return JSON.stringify({ error: { code: codeForStatus(status), message } });
}

export function frameworkErrorHandler(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const status = err.statusCode ?? 400;
  const message = status === 414 ? 'a path segment is too long' : 'the request URL is malformed';
  void reply
    .code(status)
    .header('content-type', 'application/json; charset=utf-8')
    .send(errorBody(status, message));
}

/** Node's `clientError`: the bytes are not an HTTP request we can answer through a route. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let message = 'the request is not valid HTTP';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    message = 'the request did not arrive in time';
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    message = 'the request headers are too large';
  }
  if (socket.writable) {
    const body = errorBody(status, message);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
