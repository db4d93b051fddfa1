// Dead letters of the webhook queue, for operators: list them, and requeue one once the cause is
// fixed. Mounted by the app inside the `/v1` admin scope, which checks each route's declared role
// (viewers list, admins requeue).
//   GET  /webhooks/dead-letters[?limit=N]      → 200 {"deadLetters": [...]}, newest first
//   POST /webhooks/dead-letters/:id/retry      → 202 {"status": "requeued", "id": …}; 404 if no such dead letter
import type { FastifyInstance } from 'fastify';
import { PAGE_LIMITS } from '../api/common.js';
import type { DeadLetter as DeadLetterView } from '../api/webhooks.js';
import { NotFoundError } from '../errors.js';
import type { DeadLetter, Store } from '../store/store.js';
import { routeSchema, typed } from '../admin/schemas.js';
import { adminValidator } from '../admin/validation.js';

export interface WebhookAdminDeps {
  store: Store;
  /** Called after a requeue, e.g. to wake the local drainer at once. */
  onRequeued?: () => void;
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

export function registerWebhookAdminRoutes(scope: FastifyInstance, deps: WebhookAdminDeps): void {
  const api = typed(scope);
  api.get(
    '/webhooks/dead-letters',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/webhooks/dead-letters', 'get', "The webhook queue's dead letters"),
      // Checked as in the admin scope wherever these routes are mounted (the gateway's tests mount them alone).
      validatorCompiler: adminValidator,
    },
    async (request) => {
      const limit = request.query.limit ?? PAGE_LIMITS.deadLetters.fallback;
      const letters = await deps.store.listDeadLetters(limit);
      return { deadLetters: letters.map(view) };
    },
  );

  api.post(
    '/webhooks/dead-letters/:id/retry',
    {
      config: { role: 'admin' },
      schema: routeSchema('/v1/webhooks/dead-letters/{id}/retry', 'post', 'Requeue a dead letter', 404),
      validatorCompiler: adminValidator,
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
