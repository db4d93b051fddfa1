// How the app answers over HTTP whatever the route: typed errors as `{error: {code, message}}` with
// no stack or internal message ever leaving the process, an unknown path as a 404 of the same shape,
// and request headers that must arrive promptly, upgrades included.
import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { codeForStatus, NotFoundError } from '../errors.js';

/** Slow-loris defence for upgrades too: the request headers must arrive within this. */
const HEADERS_TIMEOUT_MS = 10_000;

async function httpAnswers(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const ours = typeof err.code === 'string' && err.code.startsWith('CALLBRIDGE_');
    if (status >= 500) req.log.error({ err }, 'request failed');
    // No stack, and no internal message, ever leaves the process.
    const message = status >= 500 && !ours ? 'internal error' : err.message;
    return reply.code(status).send({ error: { code: ours ? err.code : codeForStatus(status), message } });
  });
  app.setNotFoundHandler((req) => {
    throw new NotFoundError(`no route for ${req.method} ${req.url.split('?')[0]}`);
  });
  app.server.headersTimeout = HEADERS_TIMEOUT_MS;
}

export default fp(httpAnswers, { name: 'callbridge-http' });
