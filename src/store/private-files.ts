// What the server keeps on disk is private to the user it runs as (docs/security.md, "Files"):
// DATA_DIR and every folder in it 0700, every file 0600. Transcripts, contacts, call records,
// recordings and the admin token are nobody else's business on a shared machine. Anything that
// writes under DATA_DIR creates its folders and files through these helpers.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chmod, mkdir, writeFile } from 'node:fs/promises';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** What was found wider than private and made private; empty when nothing was. */
export interface Tightened {
  /** Paths whose mode let others in and now does not. */
  tightened: string[];
  /** Paths open to others that could not be changed (owned by another user, say). */
  stillOpen: string[];
}

const openToOthers = (mode: number) => (mode & 0o077) !== 0;

/** Makes an existing path private if others may read it; records the outcome in `report`. */
function tighten(path: string, mode: number, report: Tightened): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat || !openToOthers(stat.mode)) return;
  try {
    chmodSync(path, mode);
    report.tightened.push(path);
  } catch {
    report.stillOpen.push(path);
  }
}

/**
 * Creates `dir` (and its parents) 0700. An existing folder open to others is tightened to 0700 rather
 * than left as found: the server's data in it is as private as in one it created.
 */
export function ensurePrivateDir(
  dir: string,
  report: Tightened = { tightened: [], stillOpen: [] },
): Tightened {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE, report);
  return report;
}

/** Creates an empty file 0600 if it does not exist; an existing one open to others is tightened. */
export function ensurePrivateFile(
  path: string,
  report: Tightened = { tightened: [], stillOpen: [] },
): Tightened {
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  tighten(path, PRIVATE_FILE_MODE, report);
  return report;
}

/** Tightens the files that exist among `paths` (a database's journal files, say). */
export function tightenExisting(paths: readonly string[], report: Tightened): Tightened {
  for (const path of paths) tighten(path, PRIVATE_FILE_MODE, report);
  return report;
}

/**
 * DATA_DIR at start: created 0700, or tightened with everything already in it (folders 0700, files
 * 0600), so data written by an older version, or copied in with wide modes, is private too.
 * Symbolic links are left alone: what they point to is not the server's to change.
 */
export function ensurePrivateTree(dir: string): Tightened {
  const report = ensurePrivateDir(dir);
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        tighten(path, PRIVATE_DIR_MODE, report);
        walk(path);
      } else if (stat.isFile()) {
        tighten(path, PRIVATE_FILE_MODE, report);
      }
    }
  };
  walk(dir);
  return report;
}

/** `mkdir -p` with mode 0700, for caches and stores under DATA_DIR. */
export async function mkdirPrivate(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Writes `data` to a new or existing file, leaving it 0600 whatever mode it had. */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  await writeFile(path, data, { mode: PRIVATE_FILE_MODE });
  await chmod(path, PRIVATE_FILE_MODE);
}
