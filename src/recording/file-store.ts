// Recordings as files under one folder (`$DATA_DIR/recordings` by default): `<callSid>.wav`, and
// `<callSid>.json` holding when it expires. The folder is 0700 and every file 0600: recordings are
// personal data. Writes go out in order through one file handle per recording; the WAV header at
// the start is rewritten as the data grows, so a process killed mid-call leaves a playable file.
// Several instances share recordings only on a shared volume (docs/recordings.md).
import { chmodSync, createReadStream, mkdirSync } from 'node:fs';
import { type FileHandle, open, readdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { isStorableCallSid, type RecordingStore, type RecordingUpload } from './store.js';

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

function errnoOf(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException).code;
}

/** The expiry a `.json` beside a recording holds; null when it cannot be read. */
async function readExpiry(path: string): Promise<unknown> {
  try {
    return (JSON.parse(await readFile(path, 'utf8')) as { expiresAtMs?: unknown } | null)?.expiresAtMs;
  } catch {
    return null;
  }
}

class FileUpload implements RecordingUpload {
  #pending = 0;
  #offset = 0;
  #failed: Error | null = null;
  #chain: Promise<FileHandle | null>;
  #closed = false;

  constructor(
    readonly path: string,
    readonly metaPath: string,
  ) {
    this.#chain = open(path, 'w', FILE_MODE).catch((err: Error) => {
      this.#failed = err;
      return null;
    });
  }

  get pendingBytes(): number {
    return this.#pending;
  }

  write(bytes: Buffer): void {
    if (this.#closed || bytes.length === 0) return;
    const at = this.#offset;
    this.#offset += bytes.length;
    this.#queue(bytes, at);
  }

  rewriteStart(bytes: Buffer): void {
    if (this.#closed) return;
    this.#queue(bytes, 0);
  }

  async end(): Promise<void> {
    this.#closed = true;
    const handle = await this.#chain;
    await handle?.close().catch(() => {});
    if (this.#failed) throw this.#failed;
  }

  /** Gives up: the file and its expiry are removed (a recording that failed is not kept). */
  async abort(): Promise<void> {
    this.#closed = true;
    const handle = await this.#chain;
    await handle?.close().catch(() => {});
    await unlink(this.path).catch(() => {});
    await unlink(this.metaPath).catch(() => {});
  }

  #queue(bytes: Buffer, position: number): void {
    this.#pending += bytes.length;
    this.#chain = this.#chain.then(async (handle) => {
      try {
        if (handle && !this.#failed) await handle.write(bytes, 0, bytes.length, position);
      } catch (err) {
        this.#failed = err as Error;
      } finally {
        this.#pending -= bytes.length;
      }
      return handle;
    });
  }
}

export class FileRecordingStore implements RecordingStore {
  readonly kind = 'file';

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    // mkdir's mode does not apply to a folder that already exists.
    chmodSync(dir, DIR_MODE);
  }

  begin(callSid: string, expiresAtMs: number): RecordingUpload {
    this.#check(callSid);
    // The expiry goes first: a recording is never kept without one.
    void writeFile(this.#meta(callSid), JSON.stringify({ expiresAtMs }), { mode: FILE_MODE }).catch(() => {});
    return new FileUpload(this.#wav(callSid), this.#meta(callSid));
  }

  async size(callSid: string): Promise<number | null> {
    if (!isStorableCallSid(callSid)) return null;
    try {
      return (await stat(this.#wav(callSid))).size;
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return null;
      throw err;
    }
  }

  async read(callSid: string, start: number, end: number): Promise<Readable> {
    this.#check(callSid);
    return createReadStream(this.#wav(callSid), { start, end });
  }

  async remove(callSid: string): Promise<boolean> {
    if (!isStorableCallSid(callSid)) return false;
    await unlink(this.#meta(callSid)).catch(() => {});
    try {
      await unlink(this.#wav(callSid));
      return true;
    } catch (err) {
      if (errnoOf(err) === 'ENOENT') return false;
      throw err;
    }
  }

  async removeExpired(nowMs: number, limit: number): Promise<string[]> {
    const found: string[] = [];
    for (const name of await readdir(this.dir)) {
      if (found.length >= limit) break;
      if (!name.endsWith('.json')) continue;
      const callSid = name.slice(0, -'.json'.length);
      const expiresAtMs = await readExpiry(join(this.dir, name));
      if (typeof expiresAtMs !== 'number' || expiresAtMs > nowMs) continue;
      await this.remove(callSid);
      found.push(callSid);
    }
    return found;
  }

  async close(): Promise<void> {}

  #check(callSid: string): void {
    if (!isStorableCallSid(callSid)) throw new RangeError('not a call id a recording can be stored under');
  }

  #wav(callSid: string): string {
    return join(this.dir, `${callSid}.wav`);
  }

  #meta(callSid: string): string {
    return join(this.dir, `${callSid}.json`);
  }
}
