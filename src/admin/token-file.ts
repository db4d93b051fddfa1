// The admin token when ADMIN_TOKEN is not set: created at first start in `$DATA_DIR/admin-token`
// (mode 0600, so only the server's user reads it) and reused after, so the CLI on the same machine
// finds it. The token itself is never logged, only where it is.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { ensurePrivateDir } from '../store/private-files.js';

export const ADMIN_TOKEN_FILE = 'admin-token';
const MIN_TOKEN_CHARS = 16;

export interface AdminTokenFile {
  token: string;
  path: string;
  created: boolean;
  /** True when others than the owner may read the file (someone widened its mode). */
  exposed: boolean;
}

/** The token in `<dataDir>/admin-token`, written first if the file does not exist. */
export function ensureAdminToken(dataDir: string): AdminTokenFile {
  const path = join(dataDir, ADMIN_TOKEN_FILE);
  ensurePrivateDir(dataDir);
  let created = false;
  try {
    // `wx`: two processes starting on one DATA_DIR cannot both write it; the loser reads the winner's.
    const fd = openSync(path, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('base64url')}\n`);
    } finally {
      closeSync(fd);
    }
    created = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ConfigError(
        `${path}: cannot create the admin token file (${(err as NodeJS.ErrnoException).code})`,
      );
    }
  }
  return { ...readAdminTokenFile(path), path, created };
}

/** Reads and checks an admin token file; throws ConfigError saying what is wrong (never the content). */
export function readAdminTokenFile(path: string): { token: string; exposed: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `${path}: cannot read the admin token file (${(err as NodeJS.ErrnoException).code})`,
    );
  }
  const token = text.trim();
  if (token.length < MIN_TOKEN_CHARS || /\s/.test(token)) {
    throw new ConfigError(
      `${path}: holds no usable admin token (one line of ${MIN_TOKEN_CHARS} characters or more); delete it to have one created`,
    );
  }
  return { token, exposed: (statSync(path).mode & 0o077) !== 0 };
}
