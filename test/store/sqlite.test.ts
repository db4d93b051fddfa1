// The embedded adapter against the store contract, on a real file in a temporary folder.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { CLOCK_SKEW_ALLOWANCE_MS, type StoreLimits } from '../../src/store/limits.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { accessStoreContract } from './access-contract.js';
import { campaignStoreContract } from './campaign-contract.js';
import { storeContract } from './contract.js';

const sqliteHarness = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'callbridge-store-'));
  return {
    open: async (limits?: Partial<StoreLimits>) =>
      openSqliteStore({ file: join(dir, 'callbridge.db'), limits }),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
};
storeContract('sqlite', sqliteHarness);
campaignStoreContract('sqlite', sqliteHarness);
accessStoreContract('sqlite', sqliteHarness);

describe('sqlite store', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('openStore creates a missing DATA_DIR and a WAL-mode callbridge.db in it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'callbridge-store-'));
    dirs.push(root);
    const dataDir = join(root, 'nested', 'data');
    const { gatewayConfig } = await import('../webhooks/helpers.js');
    const store = await openStore({ ...gatewayConfig({}, dataDir), redisUrl: null });
    await store.close();
    const file = join(dataDir, 'callbridge.db');
    expect(existsSync(file)).toBe(true);
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('holds a single-use claim for its validity plus CLOCK_SKEW_ALLOWANCE_MS, by its clock', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'callbridge-store-'));
    dirs.push(dir);
    let nowMs = 1_700_000_000_000;
    const store = openSqliteStore({ file: join(dir, 'callbridge.db'), now: () => nowMs });
    try {
      expect(await store.claimOnce('nonce', 30_000)).toBe(true);
      nowMs += 30_000 + CLOCK_SKEW_ALLOWANCE_MS - 1;
      expect(await store.claimOnce('nonce', 30_000)).toBe(false);
      nowMs += 1;
      expect(await store.claimOnce('nonce', 30_000)).toBe(true);
    } finally {
      await store.close();
    }
  });
});
