// The real process keeps DATA_DIR to its own user: created 0700 with the database, its journal
// files and the admin token 0600 whatever the umask; a DATA_DIR found open to others is made private
// at start, with a warning that says so.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { disposeAll, ensureBuilt, spawnServer } from '../helpers/server-process.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;
let root: string;
let umask: number;

beforeAll(async () => {
  await ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'callbridge-data-modes-'));
  // The widest umask: what the server creates must be private without its help.
  umask = process.umask(0o000);
}, 120_000);

afterEach(disposeAll);

afterAll(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

describe('DATA_DIR modes', () => {
  it('creates DATA_DIR 0700 and the database, its journal and the admin token 0600', async () => {
    const dataDir = join(root, 'fresh', 'data');
    const server = await spawnServer({ DATA_DIR: dataDir });
    // A write, so the database's journal files exist.
    const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    const res = await fetch(`${server.baseUrl}/v1/dnc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ numbers: ['+12125550100'] }),
    });
    expect(res.status).toBe(200);
    expect(modeOf(dataDir)).toBe(0o700);
    for (const name of ['callbridge.db', 'callbridge.db-wal', 'callbridge.db-shm', 'admin-token']) {
      expect(modeOf(join(dataDir, name)), name).toBe(0o600);
    }
  }, 60_000);

  it('makes an existing DATA_DIR open to others private, and warns', async () => {
    const dataDir = join(root, 'shared');
    mkdirSync(join(dataDir, 'prompts'), { recursive: true });
    chmodSync(dataDir, 0o755);
    chmodSync(join(dataDir, 'prompts'), 0o777);
    writeFileSync(join(dataDir, 'callbridge.db-journal-notes'), 'left by an older version', { mode: 0o644 });
    const server = await spawnServer({ DATA_DIR: dataDir, ADMIN_TOKEN: 'admin-token-for-modes-test' });
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(join(dataDir, 'prompts'))).toBe(0o700);
    expect(modeOf(join(dataDir, 'callbridge.db-journal-notes'))).toBe(0o600);
    const warning = server
      .output()
      .split('\n')
      .find((line) => line.includes('DATA_DIR held files or folders other users could read'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40, path: dataDir, tightened: 3 });
  }, 60_000);
});
