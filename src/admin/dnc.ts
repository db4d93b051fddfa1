// The do-not-call list, checked right before every campaign dial. Mounted inside the `/v1` admin
// scope, which checks each route's declared role: viewers read, admins change it (audited).
//   GET    /dnc[?q=&limit=&cursor=] → 200 {"numbers": [{"number", "addedAt"}], "nextCursor"}, in order
//   POST   /dnc            {"numbers": ["+1…", …]} or text/csv with a phone column (and country)
//                          → 200 {"added": n, "alreadyListed": n, "rejected": [{"row", "reason"}]}
//   GET    /dnc/:number    → 200 {"number", "listed": true, "addedAt"}; 404 when not listed
//   DELETE /dnc/:number    → 204; 404 when not listed
import type { FastifyInstance } from 'fastify';
import { BadRequestError, NotFoundError } from '../errors.js';
import { addInBatches, dncFromCsv, dncFromJson } from '../outbound/dnc-import.js';
import { normalizePhone } from '../outbound/phone.js';
import type { Store } from '../store/store.js';
import { acceptCsv, allowLongProcessing, UPLOAD_BODY_LIMIT_BYTES } from './campaigns.js';
import { PAGE_LIMITS } from '../api/common.js';
import { routeSchema, typed } from './schemas.js';

export interface DncAdminDeps {
  store: Store;
  now: () => number;
}

/** The number in the path, E.164 (`+` may arrive as `%2B`). */
function pathNumber(raw: string): string {
  const checked = raw.startsWith('+') ? normalizePhone(raw) : null;
  if (!checked?.ok) throw new BadRequestError('the number must be a valid E.164 number, like +12125550100');
  return checked.e164;
}

export function registerDncAdminRoutes(scope: FastifyInstance, deps: DncAdminDeps): void {
  acceptCsv(scope);

  const api = typed(scope);
  api.get(
    '/dnc',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/dnc', 'get', 'The do-not-call list, searched by part of the number, paged'),
    },
    async (request) => {
      const { q, limit, cursor } = request.query;
      const page = await deps.store.listDoNotCall({
        limit: limit ?? PAGE_LIMITS.dnc.fallback,
        ...(q ? { q } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return {
        numbers: page.numbers.map((entry) => ({
          number: entry.number,
          addedAt: new Date(entry.addedAtMs).toISOString(),
        })),
        nextCursor: page.nextCursor,
      };
    },
  );

  api.post(
    '/dnc',
    {
      bodyLimit: UPLOAD_BODY_LIMIT_BYTES,
      preHandler: allowLongProcessing,
      config: { role: 'admin' },
      schema: routeSchema('/v1/dnc', 'post', 'Add numbers to the do-not-call list', 413),
    },
    async (request) => {
      const type = request.headers['content-type'] ?? '';
      const upload =
        typeof request.body === 'string' && type.startsWith('text/csv')
          ? await dncFromCsv(request.body)
          : type.startsWith('application/json')
            ? await dncFromJson(request.body)
            : null;
      if (!upload) throw new BadRequestError('numbers must be sent as JSON {"numbers": [...]} or text/csv');
      const added = await addInBatches(upload.numbers, (batch) => deps.store.addDoNotCall(batch, deps.now()));
      // One entry per request, not per number: an upload may list 50,000 numbers.
      const target = upload.numbers.length === 1 ? upload.numbers[0]! : `${upload.numbers.length} numbers`;
      // A request whose every row was refused changed nothing: a refused action leaves no entry.
      if (upload.numbers.length > 0) {
        await request.audit('dnc.add', target, { added, rejected: upload.rejected.length });
      }
      return { added, alreadyListed: upload.numbers.length - added, rejected: upload.rejected };
    },
  );

  api.get(
    '/dnc/:number',
    {
      config: { role: 'viewer' },
      schema: routeSchema('/v1/dnc/{number}', 'get', 'Whether a number is listed', 404),
    },
    async (request) => {
      const number = pathNumber(request.params.number);
      const entry = await deps.store.getDoNotCall(number);
      if (!entry) throw new NotFoundError(`${number} is not on the do-not-call list`);
      return { number, listed: true, addedAt: new Date(entry.addedAtMs).toISOString() };
    },
  );

  api.delete(
    '/dnc/:number',
    {
      config: { role: 'admin' },
      schema: routeSchema('/v1/dnc/{number}', 'delete', 'Remove a number from the list', 404),
    },
    async (request, reply) => {
      const number = pathNumber(request.params.number);
      if (!(await deps.store.removeDoNotCall(number))) {
        throw new NotFoundError(`${number} is not on the do-not-call list`);
      }
      await request.audit('dnc.remove', number);
      return reply.code(204).send();
    },
  );
}
