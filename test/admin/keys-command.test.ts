// `callbridge keys` writes to the store the server reads: a key made on the command line signs in
// to the running server, a listed key shows no secret, a deleted one stops working at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keysCommand } from '../../src/admin/keys-command.js';
import { loadConfig } from '../../src/carriers/load-config.js';
import { openStore } from '../../src/store/index.js';
import type { TestServer } from '../helpers/server.js';
import { ADMIN_TOKEN, call, startAccessServer } from './access-helpers.js';

const dirs: string[] = [];
const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function cli(dataDir: string) {
  let out = '';
  let err = '';
  const io = {
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    out: (text: string) => (out += text),
    err: (text: string) => (err += text),
  };
  return {
    run: async (...args: string[]) => {
      out = '';
      err = '';
      return keysCommand(args, io);
    },
    out: () => out,
    err: () => err,
  };
}

describe('callbridge keys', () => {
  it('creates, lists and deletes keys in the store the server uses', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-keys-'));
    dirs.push(dataDir);
    const server = await startAccessServer({ DATA_DIR: dataDir });
    servers.push(server);
    const keys = cli(dataDir);

    expect(await keys.run('create', '--name', 'night shift', '--role', 'operator')).toBe(0);
    const key = keys.out().trim();
    expect(key).toMatch(/^cbk_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
    expect(keys.err()).toMatch(/shown only this once/);
    const session = await call(server, 'POST', '/v1/session', { body: { key } });
    expect(session.body).toMatchObject({ name: 'night shift', role: 'operator' });

    expect(await keys.run('list')).toBe(0);
    const id = key.split('_')[1]!;
    expect(keys.out()).toContain(`${id}  operator`);
    expect(keys.out()).not.toContain(key.split('_')[2]!);

    expect(await keys.run('delete', id)).toBe(0);
    expect((await call(server, 'GET', '/v1/calls', { bearer: key })).status).toBe(401);
    const audit = await call(server, 'GET', '/v1/audit', { bearer: ADMIN_TOKEN });
    expect(
      (audit.body.entries as { keyName: string; action: string }[]).map((e) => [e.keyName, e.action]),
    ).toEqual([
      ['cli', 'key.delete'],
      ['cli', 'key.create'],
    ]);
  });

  it('refuses a missing name, an unknown role, an unknown id and an unknown action', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-keys-'));
    dirs.push(dataDir);
    const keys = cli(dataDir);
    expect(await keys.run('create', '--role', 'admin')).toBe(2);
    expect(keys.err()).toMatch(/--name is required/);
    expect(await keys.run('create', '--name', 'x', '--role', 'root')).toBe(2);
    expect(keys.err()).toMatch(/--role must be one of viewer, operator, admin/);
    expect(await keys.run('delete', 'nope')).toBe(1);
    expect(keys.err()).toMatch(/no key "nope"/);
    expect(await keys.run('rotate')).toBe(2);
    expect(await keys.run('create', '--bogus')).toBe(2);
  });

  it('refuses a reserved, taken or unprintable name, and lists a stored one as one plain line', async () => {
    // Issue 30: a name with a newline and U+202E made `keys list` print a fake admin line.
    const dataDir = mkdtempSync(join(tmpdir(), 'callbridge-keys-'));
    dirs.push(dataDir);
    const keys = cli(dataDir);
    for (const name of ['cli', 'Admin-Token', 'a\u202eb', 'two\nlines']) {
      expect(await keys.run('create', '--name', name, '--role', 'viewer'), name).toBe(1);
      expect(keys.err()).toMatch(/reserved|printable/);
    }
    expect(await keys.run('create', '--name', 'night', '--role', 'viewer')).toBe(0);
    expect(await keys.run('create', '--name', 'NIGHT', '--role', 'admin')).toBe(1);
    expect(keys.err()).toMatch(/already exists/);
    // A name written to the store by other means (or before these rules) is shown escaped.
    const store = await openStore(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }));
    await store.saveApiKey({
      id: '0123456789abcdef',
      name: 'x\n0000000000000000  admin     2030-01-01T00:00:00.000Z  \u202eadmin-token',
      role: 'viewer',
      secretHash: 'a'.repeat(64),
      createdAtMs: 1,
    });
    await store.close();
    expect(await keys.run('list')).toBe(0);
    const lines = keys.out().trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      '0123456789abcdef  viewer    1970-01-01T00:00:00.001Z  x\\u{a}0000000000000000  admin     2030-01-01T00:00:00.000Z  \\u{202e}admin-token',
    );
  });
});
