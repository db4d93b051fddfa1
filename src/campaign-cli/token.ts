// The admin token the campaign commands send: ADMIN_TOKEN, else the file the server created at
// first start, `$DATA_DIR/admin-token` (DATA_DIR defaults to ./data, as the server's does).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN_FILE, readAdminTokenFile } from '../admin/token-file.js';

export function cliAdminToken(env: Record<string, string | undefined>, cwd: string): string {
  const fromEnv = env.ADMIN_TOKEN?.trim();
  if (fromEnv) return fromEnv;
  const path = join(resolve(cwd, env.DATA_DIR?.trim() || './data'), ADMIN_TOKEN_FILE);
  if (!existsSync(path)) {
    throw new Error(
      `no admin token: set ADMIN_TOKEN, or run this where the server keeps its data (${path} does not exist)`,
    );
  }
  return readAdminTokenFile(path).token;
}
