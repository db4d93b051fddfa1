// The operator console's files (built by `npm run build` from web/ into dist/console/), served at
// /console on the admin API's own origin with a strict Content-Security-Policy: the page may load
// nothing from anywhere else (docs/console.md). Paths without a file extension are the app's own
// routes and get index.html. Without a build, /console says so with a 503.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Counter } from 'prom-client';
import { CSP_REPORTING, registerCspReportRoute } from './csp-reports.js';
import { typed } from './schemas.js';

/** <repository>/dist/console, from src/admin (tests) and dist/admin (the build) alike. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../dist/console', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'self'",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  // Violations are reported to this server and counted (csp-reports.ts).
  CSP_REPORTING,
].join('; ');

/** What the console's build leaves in index.html where this answer's nonce goes (web/vite.config.ts). */
const NONCE_PLACEHOLDER = /__CSP_NONCE__/g;

/**
 * index.html's policy: the one above, with style elements carrying `nonce` allowed too. The waveform
 * widget adds one such element in its shadow DOM (docs/console.md, "The console's files").
 */
export function pagePolicy(nonce: string): string {
  return CONSOLE_CSP.replace("style-src 'self'", `style-src 'self' 'nonce-${nonce}'`);
}

const NOT_BUILT =
  'the console was not built: run `npm run build` (npm start does), then restart the server\n';

export function consoleFiles(
  dir: string = DEFAULT_CONSOLE_DIR,
  metrics?: { cspViolations: Counter<'directive'> },
) {
  return async function plugin(scope: FastifyInstance): Promise<void> {
    if (metrics) registerCspReportRoute(scope, metrics.cspViolations);
    scope.addHook('onSend', async (_req, reply, payload) => {
      if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', CONSOLE_CSP);
      reply.header('x-content-type-options', 'nosniff');
      reply.header('referrer-policy', 'no-referrer');
      return payload;
    });
    const built = existsSync(join(dir, 'index.html'));
    if (!built) {
      const notBuilt = async (_req: unknown, reply: FastifyReply) =>
        reply.code(503).type('text/plain; charset=utf-8').send(NOT_BUILT);
      scope.get('/console', notBuilt);
      scope.get('/console/*', notBuilt);
      return;
    }
    await scope.register(fastifyStatic, {
      root: dir,
      prefix: '/console/',
      // Files are routed one by one as they are at start; everything else falls to the app below.
      wildcard: false,
      index: false,
      decorateReply: true,
      cacheControl: false,
    });
    const app = async (_req: unknown, reply: FastifyReply) => {
      // A fresh nonce per answer, so a page never holds one an attacker could have read elsewhere.
      const nonce = randomBytes(16).toString('base64');
      const page = await readFile(join(dir, 'index.html'), 'utf8');
      return reply
        .header('cache-control', 'no-store')
        .header('content-security-policy', pagePolicy(nonce))
        .type('text/html; charset=utf-8')
        .send(page.replace(NONCE_PLACEHOLDER, nonce));
    };
    scope.get('/console', app);
    scope.get('/console/', app);
    const files = { params: Type.Object({ '*': Type.String() }) };
    typed(scope).get('/console/*', { schema: files }, async (req, reply) => {
      // A missing asset is a 404, not the page: a script tag must never receive HTML.
      if (/\.[A-Za-z0-9]+$/.test(req.params['*'])) {
        return reply.code(404).type('text/plain; charset=utf-8').send('not found\n');
      }
      return app(req, reply);
    });
  };
}
