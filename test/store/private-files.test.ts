// What the server keeps on disk is readable by its own user only: folders it creates are 0700 and
// files 0600 whatever the umask, and folders and files found wider are tightened and reported.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ensurePrivateDir,
  ensurePrivateFile,
  ensurePrivateTree,
  mkdirPrivate,
  writePrivateFile,
} from '../../src/store/private-files.js';
import { openSqliteStore } from '../../src/store/sqlite.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;
let root: string;
let umask: number;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'callbridge-private-'));
  // The widest usual umask: the modes must not depend on it.
  umask = process.umask(0o000);
});

afterEach(() => {
  process.umask(umask);
  rmSync(root, { recursive: true, force: true });
});

describe('private folders and files', () => {
  it('creates folders 0700 (parents included) and files 0600', async () => {
    const dir = join(root, 'a', 'b');
    expect(ensurePrivateDir(dir)).toEqual({ tightened: [], stillOpen: [] });
    expect(modeOf(join(root, 'a'))).toBe(0o700);
    expect(modeOf(dir)).toBe(0o700);
    ensurePrivateFile(join(dir, 'db'));
    expect(modeOf(join(dir, 'db'))).toBe(0o600);
    await mkdirPrivate(join(root, 'cache'));
    await writePrivateFile(join(root, 'cache', 'f'), 'x');
    expect(modeOf(join(root, 'cache'))).toBe(0o700);
    expect(modeOf(join(root, 'cache', 'f'))).toBe(0o600);
  });

  it('tightens an existing folder and file that others could read, and says so', () => {
    const dir = join(root, 'data');
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, 'db'), 'x', { mode: 0o644 });
    expect(ensurePrivateDir(dir).tightened).toEqual([dir]);
    expect(ensurePrivateFile(join(dir, 'db')).tightened).toEqual([join(dir, 'db')]);
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(join(dir, 'db'))).toBe(0o600);
    expect(ensurePrivateDir(dir).tightened).toEqual([]);
  });

  it('tightens a whole DATA_DIR written with wide modes, leaving symbolic links and their targets alone', () => {
    const dir = join(root, 'data');
    mkdirSync(join(dir, 'prompts'), { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o775);
    writeFileSync(join(dir, 'callbridge.db'), 'x', { mode: 0o644 });
    writeFileSync(join(dir, 'prompts', 'a.raw'), 'x', { mode: 0o666 });
    writeFileSync(join(dir, 'private'), 'x', { mode: 0o600 });
    const outside = join(root, 'outside');
    writeFileSync(outside, 'x', { mode: 0o644 });
    symlinkSync(outside, join(dir, 'link'));
    const report = ensurePrivateTree(dir);
    expect(report.tightened.sort()).toEqual(
      [dir, join(dir, 'callbridge.db'), join(dir, 'prompts'), join(dir, 'prompts', 'a.raw')].sort(),
    );
    expect([dir, join(dir, 'prompts')].map(modeOf)).toEqual([0o700, 0o700]);
    expect(['callbridge.db', 'prompts/a.raw', 'private'].map((f) => modeOf(join(dir, f)))).toEqual([
      0o600, 0o600, 0o600,
    ]);
    expect(modeOf(outside)).toBe(0o644);
  });

  it('opens the SQLite database 0600, its journal files too, in a 0700 folder', async () => {
    const file = join(root, 'data', 'callbridge.db');
    const store = openSqliteStore({ file });
    await store.addDoNotCall(['+12125550100'], Date.now());
    try {
      expect(modeOf(join(root, 'data'))).toBe(0o700);
      for (const path of [file, `${file}-wal`, `${file}-shm`]) {
        expect(existsSync(path), path).toBe(true);
        expect(modeOf(path), path).toBe(0o600);
      }
    } finally {
      await store.close();
    }
  });
});
