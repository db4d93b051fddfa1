// Dead letters of the webhook queue, for operators: list them, and requeue one once the cause is
// fixed. Mounted by the app inside the `/v1` admin scope, which checks each route's declared role
// (viewers list, admins requeue).
//   GET  /webhooks/dead-letters[?limit=N]      → 200 {"deadLetters": [...]}, newest first
//   POST /webhooks/dead-letters/:id/retry      → 202 {"status": "requeued", "id": …}; 404 if no such dead letter
import type { FastifyInstance } from 'fastify';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { DeadLetter, Store } from '../store/store.js';
import { DeadLetterQuery, DeadLetters, errors, IdParams, Requeued } from '../admin/schemas.js';

export interface WebhookAdminDeps {
  store: Store;
  /** Called after a requeue, e.g. to wake the local drainer at once. */
  onRequeued?: () => void;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export interface DeadLetterView {
  id: string;
  name: string;
  provider: string;
  idempotencyKey: string;
  attempts: number;
  enqueuedAt: string;
  deadAt: string;
  lastError: string | null;
  payload: unknown;
}

function view(letter: DeadLetter): DeadLetterView {
  return {
    id: letter.id,
    name: letter.name,
    provider: letter.provider,
    idempotencyKey: letter.idempotencyKey,
    attempts: letter.attempts,
    enqueuedAt: new Date(letter.enqueuedAtMs).toISOString(),
    deadAt: new Date(letter.deadAtMs).toISOString(),
    lastError: letter.lastError,
    payload: letter.payload,
  };
}

function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  const limit = Number(raw);
  if (!/^\d+$/.test(raw) || limit < 1 || limit > MAX_LIMIT) {
    throw new BadRequestError(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  return limit;
}

export function registerWebhookAdminRoutes(scope: FastifyInstance, deps: WebhookAdminDeps): void {
  scope.get<{ Querystring: { limit?: string } }>(
    '/webhooks/dead-letters',
    {
      config: { role: 'viewer' },
      schema: {
        summary: "The webhook queue's dead letters",
        querystring: DeadLetterQuery,
        response: { 200: DeadLetters, ...errors() },
      },
    },
    async (request) => {
      const letters = await deps.store.listDeadLetters(parseLimit(request.query.limit));
      return { deadLetters: letters.map(view) };
    },
  );

  scope.post<{ Params: { id: string } }>(
    '/webhooks/dead-letters/:id/retry',
    {
      config: { role: 'admin' },
      schema: {
        summary: 'Requeue a dead letter',
        params: IdParams,
        response: { 202: Requeued, ...errors(404) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!(await deps.store.retryDeadLetter(id))) {
        throw new NotFoundError(`no dead letter ${JSON.stringify(id.slice(0, 80))}`);
      }
      deps.onRequeued?.();
      await request.audit('webhook.retry', id);
      return reply.code(202).send({ status: 'requeued', id });
    },
  );
}
