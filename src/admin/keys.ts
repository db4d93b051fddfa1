// API keys, for admins (docs/console.md, "Keys"); creations and deletions are audited.
//   POST   /keys {name, role} → 201 {id, name, role, key, createdAt}: the key is shown this once
//   GET    /keys              → 200 {"keys": [{id, name, role, createdAt}]}, oldest first
//   DELETE /keys/:id          → 204; its sessions end with it; 404 if no such key
import type { FastifyInstance } from 'fastify';
import { BadRequestError, ConflictError, NotFoundError } from '../errors.js';
import type { ApiKeyRecord, Role } from '../store/access.js';
import type { Store } from '../store/store.js';
import { newApiKey } from './credentials.js';
import type { ApiKey, CreatedKey } from '../api/access.js';
import { keyNameProblem, normaliseKeyName } from './key-names.js';
import { routeSchema, typed } from './schemas.js';

export interface KeyAdminDeps {
  store: Store;
  now: () => number;
}

function keyView(key: ApiKeyRecord): ApiKey {
  return { id: key.id, name: key.name, role: key.role, createdAt: new Date(key.createdAtMs).toISOString() };
}

/**
 * Creates and stores a key (the admin API and `callbridge keys create` share this). Throws
 * BadRequestError for a name that is not printable or is reserved, ConflictError for one in use.
 */
export async function createApiKey(
  store: Store,
  rawName: string,
  role: Role,
  nowMs: number,
): Promise<CreatedKey> {
  const name = normaliseKeyName(rawName);
  const taken = (await store.listApiKeys()).map((key) => key.name);
  const problem = keyNameProblem(name, taken);
  if (problem !== null) {
    throw problem.kind === 'taken'
      ? new ConflictError(problem.message)
      : new BadRequestError(problem.message);
  }
  const { record, key } = newApiKey(name, role, nowMs);
  await store.saveApiKey(record);
  return { ...keyView(record), key };
}

export function registerKeyAdminRoutes(scope: FastifyInstance, deps: KeyAdminDeps): void {
  const api = typed(scope);
  api.post(
    '/keys',
    {
      config: { role: 'admin' },
      schema: routeSchema(
        '/v1/keys',
        'post',
        'Create an API key (its name printable, unique, not reserved)',
        409,
      ),
    },
    async (request, reply) => {
      const created = await createApiKey(deps.store, request.body.name, request.body.role, deps.now());
      await request.audit('key.create', created.id, { name: created.name, role: created.role });
      return reply.code(201).send(created);
    },
  );

  api.get(
    '/keys',
    {
      config: { role: 'admin' },
      schema: routeSchema('/v1/keys', 'get', 'The API keys (never their secrets)'),
    },
    async () => ({ keys: (await deps.store.listApiKeys()).map(keyView) }),
  );

  api.delete(
    '/keys/:id',
    {
      config: { role: 'admin' },
      schema: routeSchema('/v1/keys/{id}', 'delete', 'Delete an API key and end its sessions', 404),
    },
    async (request, reply) => {
      const { id } = request.params;
      const key = await deps.store.getApiKey(id);
      if (!key || !(await deps.store.deleteApiKey(id))) {
        throw new NotFoundError(`no API key ${JSON.stringify(id.slice(0, 80))}`);
      }
      await request.audit('key.delete', id, { name: key.name });
      // Its sessions went with it; the streams they, or the key itself, opened close now.
      await request.streams?.sweep();
      return reply.code(204).send();
    },
  );
}
