// `callbridge keys create|list|delete`: API keys made on the server's own machine, written straight
// to the configured store (SQLite in DATA_DIR, or REDIS_URL), so no key is needed to make the first
// one. Creations and deletions are audited under the name `cli`. docs/console.md, "Keys".
import { parseArgs } from 'node:util';
import { loadConfig } from '../carriers/load-config.js';
import { ROLES } from '../store/access.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/store.js';
import { printableKeyName } from './key-names.js';
import { createApiKey } from './keys.js';
import { CLI_NAME } from './principal.js';
import { isRole } from './roles.js';

export const KEYS_USAGE = `usage: callbridge keys <create|list|delete> [options]

  keys create --name NAME --role ROLE   make a key; it is printed this once
  keys list                             the keys (never their secrets)
  keys delete ID                        delete a key; its console sessions end

  --name NAME    the key's name, shown in the audit log
  --role ROLE    viewer (read everything), operator (also control calls and campaigns) or admin
                 (also keys, the do-not-call list and settings)

Writes to the store the server is configured with (DATA_DIR, or REDIS_URL), read from the
environment like the server's own configuration.
`;

export interface KeysIo {
  env: NodeJS.ProcessEnv;
  out(text: string): void;
  err(text: string): void;
  now?: () => number;
}

async function withStore<T>(io: KeysIo, run: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig(io.env));
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

export async function keysCommand(args: string[], io: KeysIo): Promise<number> {
  const [action, ...rest] = args;
  const now = io.now ?? Date.now;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { name: { type: 'string' }, role: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    io.err(`callbridge keys: ${(err as Error).message}\n${KEYS_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const asksHelp = action === 'help' || action === '--help' || action === '-h';
  if (values.help || action === undefined || asksHelp) {
    io.out(KEYS_USAGE);
    return action === undefined ? 2 : 0;
  }
  try {
    switch (action) {
      case 'create': {
        const name = values.name?.trim() ?? '';
        if (name.length === 0 || name.length > 80 || positionals.length > 0) {
          io.err(`callbridge keys create: --name is required (1 to 80 characters)\n${KEYS_USAGE}`);
          return 2;
        }
        if (!isRole(values.role)) {
          io.err(`callbridge keys create: --role must be one of ${ROLES.join(', ')}\n`);
          return 2;
        }
        const role = values.role;
        const created = await withStore(io, async (store) => {
          const made = await createApiKey(store, name, role, now());
          await store.appendAudit({
            atMs: now(),
            keyId: null,
            keyName: CLI_NAME,
            role: 'admin',
            action: 'key.create',
            target: made.id,
            detail: { name, role },
          });
          return made;
        });
        io.out(`${created.key}\n`);
        io.err(
          `created key ${created.id} ${JSON.stringify(created.name)} (${created.role}); it is shown only this once\n`,
        );
        return 0;
      }
      case 'list': {
        const keys = await withStore(io, (store) => store.listApiKeys());
        if (keys.length === 0) io.err('no API keys (ADMIN_TOKEN is always an admin key)\n');
        for (const key of keys) {
          io.out(
            `${key.id}  ${key.role.padEnd(8)}  ${new Date(key.createdAtMs).toISOString()}  ${printableKeyName(key.name)}\n`,
          );
        }
        return 0;
      }
      case 'delete': {
        const [id, extra] = positionals;
        if (id === undefined || extra !== undefined) {
          io.err(`callbridge keys delete: give one key id\n${KEYS_USAGE}`);
          return 2;
        }
        const deleted = await withStore(io, async (store) => {
          const key = await store.getApiKey(id);
          if (!key || !(await store.deleteApiKey(id))) return false;
          await store.appendAudit({
            atMs: now(),
            keyId: null,
            keyName: CLI_NAME,
            role: 'admin',
            action: 'key.delete',
            target: id,
            detail: { name: key.name },
          });
          return true;
        });
        if (!deleted) {
          io.err(`callbridge keys delete: no key ${JSON.stringify(id.slice(0, 80))}\n`);
          return 1;
        }
        io.err(`deleted key ${id}\n`);
        return 0;
      }
      default:
        io.err(`callbridge keys: unknown action "${action}"\n${KEYS_USAGE}`);
        return 2;
    }
  } catch (err) {
    io.err(`callbridge keys: ${(err as Error).message}\n`);
    return 1;
  }
}
