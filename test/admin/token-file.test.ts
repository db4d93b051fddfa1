// The admin token when ADMIN_TOKEN is unset: the real entry point creates $DATA_DIR/admin-token at
// first start (mode 0600, its path logged, never the token), uses it, and keeps it across restarts.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureAdminToken, readAdminTokenFile } from '../../src/admin/token-file.js';
import { ensureBuilt, ROOT, type ServerProcess, spawnServer } from '../helpers/server-process.js';

const dirs: string[] = [];
const servers: ServerProcess[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-token-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const status = async (baseUrl: string, token?: string) =>
  (
    await fetch(`${baseUrl}/v1/campaigns`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    })
  ).status;

describe('the admin token file, through the real entry point', () => {
  it('is created at first start with mode 0600, logged by path only, and used for the admin API', async () => {
    const dataDir = tempDir();
    const first = await spawnServer({ DATA_DIR: dataDir });
    servers.push(first);
    const file = join(dataDir, 'admin-token');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const token = readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(first.output()).toContain(file);
    expect(first.output()).not.toContain(token);
    expect(await status(first.baseUrl, token)).toBe(200);
    expect(await status(first.baseUrl)).toBe(401);
    expect(await status(first.baseUrl, 'x'.repeat(token.length))).toBe(401);

    // A restart keeps the token the CLI already read.
    first.child.kill('SIGTERM');
    await first.exited;
    const second = await spawnServer({ DATA_DIR: dataDir });
    servers.push(second);
    expect(readFileSync(file, 'utf8').trim()).toBe(token);
    expect(await status(second.baseUrl, token)).toBe(200);
    expect(second.output()).toContain('using the admin token in this file');
  }, 60_000);

  it('is neither created nor read when ADMIN_TOKEN is set', async () => {
    const dataDir = tempDir();
    const server = await spawnServer({ DATA_DIR: dataDir, ADMIN_TOKEN: 'an-admin-token-from-the-env' });
    servers.push(server);
    expect(existsSync(join(dataDir, 'admin-token'))).toBe(false);
    expect(await status(server.baseUrl, 'an-admin-token-from-the-env')).toBe(200);
  }, 60_000);

  it('stops the start with one line when the file holds no usable token', () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'admin-token'), 'short\n', { mode: 0o600 });
    const result = spawnSync(process.execPath, ['dist/main.js'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      `callbridge: invalid configuration: ${join(dataDir, 'admin-token')}: holds no usable admin token (one line of 16 characters or more); delete it to have one created`,
    ]);
    expect(result.stderr).not.toContain('short');
  });
});

describe('ensureAdminToken', () => {
  it('gives two processes starting at once the same token', () => {
    const dataDir = tempDir();
    const a = ensureAdminToken(dataDir);
    const b = ensureAdminToken(dataDir);
    expect([a.created, b.created]).toEqual([true, false]);
    expect(b.token).toBe(a.token);
    expect(a.exposed).toBe(false);
  });

  it('says when the file is readable by others, and refuses an unreadable one', () => {
    const dataDir = tempDir();
    const { path } = ensureAdminToken(join(dataDir, 'nested'));
    chmodSync(path, 0o644);
    expect(readAdminTokenFile(path).exposed).toBe(true);
    expect(() => readAdminTokenFile(join(dataDir, 'missing'))).toThrow(
      /cannot read the admin token file \(ENOENT\)/,
    );
  });
});
