// Picks the store adapter from configuration: Redis when REDIS_URL is set, else embedded SQLite.
import { join } from 'node:path';
import type { Config } from '../config/types.js';
import { openRedisStore } from './redis.js';
import { openSqliteStore, SQLITE_FILE_NAME } from './sqlite.js';
import type { Store } from './store.js';

export type { Store } from './store.js';

export async function openStore(config: Config): Promise<Store> {
  if (config.redisUrl) {
    return openRedisStore({ url: config.redisUrl, keyPrefix: config.redisKeyPrefix });
  }
  return openSqliteStore({ file: join(config.dataDir, SQLITE_FILE_NAME) });
}
